import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { Loading, ProjectNav, copyText, useLoad } from '../common.js'
import { html } from '../html.js'
import { browserSnippet, nodeSnippet, pythonSnippet } from '../snippets.js'

function SecretKey({ project }) {
  const [shown, setShown] = useState(false)
  return html`<div class="key-row">
    <dt>Secret key (<code>phs_…</code>)</dt>
    <dd>
      ${shown ? html`<code>${project.secret_api_token}</code>` : html`<span>hidden</span>`}
      <button type="button" aria-expanded=${shown ? 'true' : 'false'} onClick=${() => setShown(!shown)}>
        ${shown ? 'Hide secret key' : 'Reveal secret key'}
      </button>
      <p class="hint">For server SDKs evaluating flags locally (<code>personalApiKey</code>). Keep it out of browsers.</p>
    </dd>
  </div>`
}

function Snippet({ id, title, code }) {
  const [status, setStatus] = useState('')
  return html`<section aria-labelledby=${`${id}-heading`} class="snippet">
    <h3 id=${`${id}-heading`}>${title}</h3>
    <label for=${id} class="visually-hidden">${title} set-up code</label>
    <textarea id=${id} readonly rows=${Math.min(code.split('\n').length, 14)} value=${code}></textarea>
    <button type="button" onClick=${async () => setStatus(await copyText(code))}>Copy ${title} code</button>
    <span role="status">${status}</span>
  </section>`
}

export function ProjectPage({ projectId }) {
  const state = useLoad(() => api.project(projectId), [projectId])
  const origin = location.origin
  return html`<${Loading} state=${state}>
    ${(project) => html`
      <h1 tabindex="-1">${project.name}</h1>
      <${ProjectNav} project=${project} current="overview" />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys</h2>
        <dl class="keys">
          <div class="key-row"><dt>Project id</dt><dd>${project.id}</dd></div>
          <div class="key-row"><dt>Timezone</dt><dd>${project.timezone}</dd></div>
          <div class="key-row">
            <dt>Public key (<code>phc_…</code>)</dt>
            <dd><code>${project.api_token}</code><p class="hint">What SDKs send with events and flag requests.</p></dd>
          </div>
          <${SecretKey} project=${project} />
        </dl>
      </section>
      <section aria-labelledby="setup-heading">
        <h2 id="setup-heading">Set up an SDK</h2>
        <p>Each snippet points the SDK at this service (<code>${origin}</code>).</p>
        <${Snippet} id="snippet-js" title="posthog-js" code=${browserSnippet(origin, project.api_token)} />
        <${Snippet} id="snippet-node" title="posthog-node" code=${nodeSnippet(origin, project.api_token)} />
        <${Snippet} id="snippet-python" title="posthog-python" code=${pythonSnippet(origin, project.api_token)} />
      </section>
    `}
  <//>`
}
