// The pipeline: the plugins in their configured order, the hooks each tapped (where it runs among
// that hook's taps), their options with secrets masked by the service, and their error counts.
import { api } from '../api.js'
import { Loading, useLoad } from '../common.js'
import { html } from '../html.js'

function Plugins({ plugins }) {
  return html`<table>
    <caption>Plugins, in the order they are configured</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Plugin</th><th scope="col">Hooks</th>
      <th scope="col">Options</th><th scope="col">Errors</th></tr></thead>
    <tbody>
      ${plugins.map(
        (p) => html`<tr>
          <td>${p.position}</td>
          <th scope="row"><code>${p.id}</code>${p.required ? ' (required)' : ''}<br /><span class="hint">${p.source}</span></th>
          <td><ul class="plain">${p.hooks.map((h) => html`<li><code>${h.hook}</code> (${h.position} of ${h.of})</li>`)}</ul></td>
          <td><pre>${Object.keys(p.options ?? {}).length ? JSON.stringify(p.options, null, 2) : 'none'}</pre></td>
          <td>${p.errors}</td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

function Hooks({ hooks }) {
  return html`<table>
    <caption>Hooks, in the order they run, with their taps</caption>
    <thead><tr><th scope="col">Hook</th><th scope="col">Kind</th><th scope="col">A failing tap</th>
      <th scope="col">Plugins, in the order they run</th></tr></thead>
    <tbody>
      ${hooks.map(
        (h) => html`<tr>
          <th scope="row"><code>${h.hook}</code></th><td>${h.kind}</td><td>${h.policy}</td>
          <td>${h.plugins.length ? h.plugins.join(' → ') : 'none'}</td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

export function PipelinePage() {
  const state = useLoad(() => api.pipeline(), [])
  return html`
    <h1 tabindex="-1">Pipeline</h1>
    <p class="hint">Error counts are this service process's, since it started. Secrets in options are masked.</p>
    <${Loading} state=${state}>
      ${(pipeline) => html`<${Plugins} plugins=${pipeline.plugins} /><${Hooks} hooks=${pipeline.hooks} />`}
    <//>
  `
}
