// Look up a person by distinct id: its properties, distinct ids, recent events and the value each
// flag has for it (with the reason), all from the admin API. Everything shown is set as text.
import { useState } from '../vendor/hooks.js'
import { api, tryFlags } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { html } from '../html.js'
import { navigate } from '../router.js'
import { PropertySources, Results } from './try-flags.js'

const shown = (value) => (typeof value === 'string' ? value : JSON.stringify(value))

function Properties({ properties }) {
  const entries = Object.entries(properties).sort(([a], [b]) => a.localeCompare(b))
  if (entries.length === 0) return html`<p>No property.</p>`
  return html`<table>
    <caption class="visually-hidden">Person properties</caption>
    <thead><tr><th scope="col">Property</th><th scope="col">Value</th></tr></thead>
    <tbody>
      ${entries.map(([key, value]) => html`<tr><th scope="row"><code>${key}</code></th><td>${shown(value)}</td></tr>`)}
    </tbody>
  </table>`
}

function RecentEvents({ events }) {
  if (events.length === 0) return html`<p>No stored event.</p>`
  return html`<table>
    <caption class="visually-hidden">Recent events</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Properties</th></tr></thead>
    <tbody>
      ${events.map(
        (e) => html`<tr>
          <td><time datetime=${e.timestamp}>${new Date(e.timestamp).toLocaleString()}</time></td>
          <th scope="row">${e.event}</th>
          <td><details><summary>${Object.keys(e.properties ?? {}).length} properties</summary>
            <pre>${JSON.stringify(e.properties ?? {}, null, 2)}</pre></details></td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

function Person({ project, distinctId }) {
  const state = useLoad(async () => {
    const person = await api.person(project.id, distinctId).catch((error) => {
      if (error.status === 404) return null
      throw error
    })
    const [events, flags] = await Promise.all([
      api.events(project.id, { distinctId, limit: 20 }).then((r) => r.results),
      tryFlags(project, { distinctId, personProperties: {}, groups: {} }),
    ])
    return { person, events, flags }
  }, [project.id, distinctId])
  return html`<${Loading} state=${state}>
    ${({ person, events, flags }) => html`
      <h2>Person of ${distinctId}</h2>
      ${
        person === null
          ? html`<p>No stored person has this distinct id (it may only have sent anonymous events, or none).</p>`
          : html`<p>Identified: ${person.is_identified ? 'yes' : 'no'}; created ${new Date(person.created_at).toLocaleString()}.</p>
            <h3>Distinct ids</h3>
            <ul>${person.distinct_ids.map((id) => html`<li><code>${id}</code></li>`)}</ul>
            <h3>Properties</h3>
            <${Properties} properties=${person.properties ?? {}} />`
      }
      <h3>Recent events</h3>
      <${RecentEvents} events=${events} />
      <h3>Flag values</h3>
      <${Results} results=${flags.flags} />
      ${flags.properties && html`<${PropertySources} properties=${flags.properties} />`}
    `}
  <//>`
}

export function PersonsPage({ projectId, distinctId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  const [text, setText] = useState(distinctId ?? '')
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Persons of ${p.name}</h1>
      <${ProjectNav} project=${p} current="persons" />
      <form class="inline-form" role="search" onSubmit=${(e) => (e.preventDefault(), navigate(`/projects/${p.id}/persons/${encodeURIComponent(text.trim())}`))}>
        <div class="field">
          <label for="person-distinct-id">Find by distinct id</label>
          <input id="person-distinct-id" required value=${text} onInput=${(e) => setText(e.currentTarget.value)} />
        </div>
        <button type="submit">Find person</button>
      </form>
      ${distinctId && html`<${Person} project=${p} distinctId=${distinctId} />`}
    `}
  <//>`
}
