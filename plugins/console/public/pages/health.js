// A project's ingestion health: events stored and dropped per minute over the last hour, drops by
// reason, recent ingestion warnings and dead letters (each with its raw event, shown as text),
// and replaying a dead letter once its cause is fixed.
import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { ConfirmDialog } from '../dialog.js'
import { html } from '../html.js'
import { MinuteChart } from './health-chart.js'

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '')

/** The raw event as indented JSON text, behind a disclosure. */
function RawEvent({ event, label }) {
  return html`<details><summary>Raw event<span class="visually-hidden"> ${label}</span></summary>
    <pre>${JSON.stringify(event, null, 2)}</pre></details>`
}

function DropsByReason({ drops }) {
  if (drops.length === 0) return html`<p>No event was dropped in the last hour.</p>`
  return html`<table>
    <caption class="visually-hidden">Drops by reason</caption>
    <thead><tr><th scope="col">Reason</th><th scope="col">Events</th></tr></thead>
    <tbody>${drops.map((d) => html`<tr><th scope="row"><code>${d.reason}</code></th><td>${d.count}</td></tr>`)}</tbody>
  </table>`
}

function Warnings({ warnings }) {
  if (warnings.length === 0) return html`<p>No ingestion warning.</p>`
  return html`<table>
    <caption class="visually-hidden">Recent ingestion warnings</caption>
    <thead><tr><th scope="col">Warning</th><th scope="col">Time</th><th scope="col">Details</th><th scope="col">Event</th></tr></thead>
    <tbody>
      ${warnings.map(
        (w, i) => html`<tr>
          <th scope="row"><code>${w.type}</code></th>
          <td><time datetime=${w.created_at}>${when(w.created_at)}</time></td>
          <td><pre>${JSON.stringify(w.details ?? {})}</pre></td>
          <td>${w.event == null ? '' : html`<${RawEvent} event=${w.event} label=${`of warning ${i + 1}, ${w.type}`} />`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

function ReplayDialog({ project, letter, onDone, onCancel }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const confirm = async () => {
    setBusy(true)
    try {
      onDone(await api.replayDeadLetter(project.id, letter.id))
    } catch (failure) {
      setError(failure.message)
      setBusy(false)
    }
  }
  return html`<${ConfirmDialog}
    title="Replay this dead letter?"
    message=${`Its event runs through the pipeline again, as it first ran. If ${letter.plugin} still fails, nothing changes; an event already stored is not stored twice.`}
    confirmLabel="Replay event"
    busy=${busy}
    error=${error}
    onConfirm=${confirm}
    onCancel=${onCancel}
  />`
}

function replayStatus(letter) {
  if (!letter.replayed_at) return 'Not replayed'
  const outcome = letter.replay_outcome
  const result = outcome ? ` (${outcome.stored} stored, ${outcome.dropped} dropped)` : ''
  return `Replayed ${when(letter.replayed_at)}${result}`
}

function DeadLetters({ project }) {
  const [pages, setPages] = useState([`/api/projects/${encodeURIComponent(project.id)}/dead_letters?limit=20`])
  const [replaying, setReplaying] = useState(null)
  const [message, setMessage] = useState('')
  const state = useLoad(async () => {
    const answers = []
    for (const url of pages) answers.push(await api.deadLetters(url))
    return answers
  }, [project.id, pages])
  const done = (answer) => {
    setReplaying(null)
    const { stored, dropped } = answer.outcome
    setMessage(`Replayed: ${stored} stored, ${dropped} dropped.`)
    setPages([...pages])
  }
  return html`
    <p role="status">${message}</p>
    <${Loading} state=${state}>
      ${(answers) => {
        const letters = answers.flatMap((a) => a.results)
        const next = answers[answers.length - 1].next
        if (letters.length === 0) return html`<p>No dead letter.</p>`
        return html`<table>
          <caption class="visually-hidden">Dead letters</caption>
          <thead><tr><th scope="col">Event</th><th scope="col">Time</th><th scope="col">Failed in</th>
            <th scope="col">Error</th><th scope="col">Replay</th></tr></thead>
          <tbody>
            ${letters.map((letter, i) => {
              const name = `${letter.event?.event ?? 'event'} ${i + 1}`
              return html`<tr>
                <th scope="row"><code>${letter.event?.event ?? '(no name)'}</code>
                  <${RawEvent} event=${letter.event} label=${`of dead letter ${name}`} /></th>
                <td><time datetime=${letter.created_at}>${when(letter.created_at)}</time></td>
                <td><code>${letter.plugin}</code> in <code>${letter.hook}</code></td>
                <td>${letter.error}</td>
                <td>${replayStatus(letter)}
                  <button type="button" onClick=${() => setReplaying(letter)}>
                    Replay<span class="visually-hidden"> dead letter ${name}</span>
                  </button></td>
              </tr>`
            })}
          </tbody>
        </table>
        ${next && html`<button type="button" onClick=${() => setPages([...pages, next])}>Older dead letters</button>`}`
      }}
    <//>
    ${
      replaying &&
      html`<${ReplayDialog} project=${project} letter=${replaying} onDone=${done} onCancel=${() => setReplaying(null)} />`
    }
  `
}

function Health({ project }) {
  const [round, setRound] = useState(0)
  const state = useLoad(
    () => Promise.all([api.ingestionHealth(project.id), api.ingestionWarnings(project.id, 50)]),
    [project.id, round],
  )
  return html`
    <button type="button" onClick=${() => setRound(round + 1)}>Refresh</button>
    <${Loading} state=${state}>
      ${([health, warnings]) => html`
        <h2>Events per minute</h2>
        <p>In the last hour: ${health.totals.stored} stored, ${health.totals.dropped} dropped.</p>
        <${MinuteChart} minutes=${health.minutes} totals=${health.totals} />
        <h2>Drops by reason</h2>
        <${DropsByReason} drops=${health.drops_by_reason} />
        <h2>Recent ingestion warnings</h2>
        <${Warnings} warnings=${warnings.results} />
      `}
    <//>
    <h2>Dead letters</h2>
    <p class="hint">Events a plugin failed on for good, kept aside. Replay one once its cause is fixed.</p>
    <${DeadLetters} key=${round} project=${project} />
  `
}

export function HealthPage({ projectId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Ingestion health of ${p.name}</h1>
      <${ProjectNav} project=${p} current="health" />
      <${Health} project=${p} />
    `}
  <//>`
}
