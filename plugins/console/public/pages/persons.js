// Search persons by distinct id or searchable property (a page at a time), and a person's page: its
// properties, distinct ids, groups, recent events and the value each flag has for it (with the
// reason), all from the admin API. Everything shown is set as text.
import { useEffect, useRef, useState } from '../vendor/hooks.js'
import { ApiError, api, tryFlags } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { html } from '../html.js'
import { PropertySources, Results } from './try-flags.js'
import { GroupsOfEvents } from './person-groups.js'

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
      <h3>Groups</h3>
      <${GroupsOfEvents} project=${project} events=${events} />
      <h3>Recent events</h3>
      <${RecentEvents} events=${events} />
      <h3>Flag values</h3>
      <${Results} results=${flags.flags} />
      ${flags.properties && html`<${PropertySources} properties=${flags.properties} />`}
    `}
  <//>`
}

/** The last search of this tab, shown again when the operator comes back from a person's page. */
let lastSearch = ''

const personHref = (project, distinctId) => `#/projects/${project.id}/persons/${encodeURIComponent(distinctId)}`
const when = (iso) => new Date(iso).toLocaleString()

function FoundPersons({ project, pages, searchable, onMore, loadingMore }) {
  const persons = pages.flatMap((page) => page.results)
  const next = pages[pages.length - 1].next
  // after "More persons", the keyboard goes on at the first person added (the button may be gone)
  const table = useRef(null)
  useEffect(() => {
    if (pages.length < 2) return
    const first = persons.length - pages[pages.length - 1].results.length
    table.current?.querySelectorAll('tbody th a')[first]?.focus()
  }, [pages.length])
  if (persons.length === 0) return html`<p role="status">No person found.</p>`
  return html`
    <p role="status">${persons.length}${next ? '+' : ''} person${persons.length === 1 ? '' : 's'} found</p>
    <table ref=${table}>
      <caption class="visually-hidden">Persons found</caption>
      <thead><tr>
        <th scope="col">Distinct id</th><th scope="col">Matched</th>
        ${searchable.map((key) => html`<th scope="col">${key}</th>`)}
        <th scope="col">Created</th>
      </tr></thead>
      <tbody>
        ${persons.map(
          (person) => html`<tr>
            <th scope="row"><a href=${personHref(project, person.distinct_ids[0] ?? '')}>${person.distinct_ids[0] ?? person.id}</a>
              ${person.distinct_ids.length > 1 && html`<span class="hint"> and ${person.distinct_ids.slice(1).join(', ')}${person.more_distinct_ids ? ', …' : ''}</span>`}</th>
            <td><code>${person.matched.field}</code></td>
            ${searchable.map((key) => html`<td>${shown(person.properties[key] ?? '')}</td>`)}
            <td><time datetime=${person.created_at}>${when(person.created_at)}</time></td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${next && html`<button type="button" onClick=${() => onMore(next)} disabled=${loadingMore}>More persons</button>`}
  `
}

function PersonSearch({ project }) {
  const [text, setText] = useState(lastSearch)
  const [pages, setPages] = useState(null)
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const run = async (load) => {
    setBusy(true)
    setError(null)
    try {
      return await load()
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e))
      return null
    } finally {
      setBusy(false)
    }
  }
  const search = async (query) => {
    lastSearch = query
    const page = await run(() => api.searchPersons(project.id, query))
    setPages(page && [page])
  }
  const more = async (url) => {
    const page = await run(() => api.personsPage(url))
    if (page) setPages((shown) => [...shown, page])
  }
  // coming back from a person's page shows the last search again
  const searched = useRef(false)
  useEffect(() => {
    if (!searched.current && lastSearch) search(lastSearch)
    searched.current = true
  }, [])
  const submit = (e) => {
    e.preventDefault()
    if (text.trim()) search(text.trim())
  }
  const searchable = pages?.[0]?.searchable_properties ?? []
  return html`
    <form class="inline-form" role="search" aria-label="Persons" onSubmit=${submit}>
      <div class="field">
        <label for="person-search">Search persons</label>
        <input id="person-search" type="search" required maxlength="200" value=${text}
          aria-describedby="person-search-hint" onInput=${(e) => setText(e.currentTarget.value)} />
        <p id="person-search-hint" class="hint">The start of a distinct id${searchable.length ? html`, or of ${searchable.join(' or ')}` : ', or of a searchable property'} (case matters).</p>
      </div>
      <button type="submit" disabled=${busy}>Search</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${pages && html`<${FoundPersons} project=${project} pages=${pages} searchable=${searchable} onMore=${more} loadingMore=${busy} />`}
  `
}

export function PersonsPage({ projectId, distinctId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Persons of ${p.name}</h1>
      <${ProjectNav} project=${p} current="persons" />
      ${
        distinctId
          ? html`<p><a href=${`#/projects/${p.id}/persons`}>Search persons</a></p>
        <${Person} project=${p} distinctId=${distinctId} />`
          : html`<${PersonSearch} project=${p} />`
      }
    `}
  <//>`
}
