// Events stored and dropped per minute as a small SVG bar chart, with a title and a description
// for screen readers, and the same numbers as a table below it: no chart library needed.
import { html } from '../html.js'

const WIDTH = 600
const HEIGHT = 140
const TOP = 10

const clock = (iso) => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })

export function MinuteChart({ minutes, totals }) {
  const max = Math.max(1, ...minutes.map((m) => Math.max(m.stored, m.dropped)))
  const step = WIDTH / minutes.length
  const bar = Math.max(1, step / 2 - 1)
  const y = (n) => HEIGHT - ((HEIGHT - TOP) * n) / max
  const first = minutes[0]
  const last = minutes[minutes.length - 1]
  return html`<figure class="chart">
    <svg role="img" aria-labelledby="chart-title chart-desc" viewBox=${`0 0 ${WIDTH} ${HEIGHT + 18}`} width="100%">
      <title id="chart-title">Events stored and dropped per minute over the last hour</title>
      <desc id="chart-desc">
        ${totals.stored} stored and ${totals.dropped} dropped between ${clock(first.minute)} and ${clock(last.minute)};
        at most ${max} in one minute. The table below has every minute.
      </desc>
      <line class="axis" x1="0" y1=${HEIGHT} x2=${WIDTH} y2=${HEIGHT} />
      ${minutes.map(
        (m, i) => html`
          ${m.stored > 0 && html`<rect class="stored" x=${i * step} y=${y(m.stored)} width=${bar} height=${HEIGHT - y(m.stored)} />`}
          ${m.dropped > 0 && html`<rect class="dropped" x=${i * step + bar + 1} y=${y(m.dropped)} width=${bar} height=${HEIGHT - y(m.dropped)} />`}
        `,
      )}
      <text x="0" y=${HEIGHT + 15}>${clock(first.minute)}</text>
      <text x=${WIDTH} y=${HEIGHT + 15} text-anchor="end">${clock(last.minute)}</text>
    </svg>
    <figcaption><span class="swatch stored"></span> stored <span class="swatch dropped"></span> dropped</figcaption>
  </figure>
  <details>
    <summary>The chart's data as a table</summary>
    <table>
      <caption>Events stored and dropped per minute</caption>
      <thead><tr><th scope="col">Minute</th><th scope="col">Stored</th><th scope="col">Dropped</th></tr></thead>
      <tbody>
        ${minutes.map(
          (m) => html`<tr><th scope="row"><time datetime=${m.minute}>${clock(m.minute)}</time></th>
            <td>${m.stored}</td><td>${m.dropped}</td></tr>`,
        )}
      </tbody>
    </table>
  </details>`
}
