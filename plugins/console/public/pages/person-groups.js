// A person's groups on its page: the type and key of each group named in the `$groups` of its
// recent events, with the group's stored properties read through the admin API's group route.
import { api } from '../api.js'
import { Loading, useLoad } from '../common.js'
import { html } from '../html.js'

/** Each (type, key) named by these events' `$groups`, once, in the order first seen (newest first). */
function groupsOf(events) {
  const found = new Map()
  for (const event of events) {
    const groups = event.properties?.$groups
    if (!groups || typeof groups !== 'object' || Array.isArray(groups)) continue
    for (const [type, key] of Object.entries(groups)) {
      if (type === '' || key === null || typeof key === 'object' || key === '') continue
      const id = JSON.stringify([type, String(key)])
      if (!found.has(id)) found.set(id, { type, key: String(key) })
    }
  }
  return [...found.values()]
}

export function GroupsOfEvents({ project, events }) {
  const groups = groupsOf(events)
  const state = useLoad(
    () =>
      Promise.all(
        groups.map((group) =>
          api.group(project.id, group.type, group.key).then(
            (stored) => ({ ...group, properties: stored.group_properties ?? {} }),
            // not stored (yet), or a service without the group-update plugin: type and key only
            (error) => (error.status === 404 ? { ...group, properties: null } : Promise.reject(error)),
          ),
        ),
      ),
    [project.id, JSON.stringify(groups)],
  )
  if (groups.length === 0) return html`<p>No group in its recent events.</p>`
  return html`<${Loading} state=${state}>
    ${(rows) => html`<table>
      <caption class="visually-hidden">Groups</caption>
      <thead><tr><th scope="col">Group type</th><th scope="col">Key</th><th scope="col">Properties</th></tr></thead>
      <tbody>
        ${rows.map(
          (row) => html`<tr>
            <td><code>${row.type}</code></td>
            <th scope="row">${row.key}</th>
            <td>${
              row.properties === null
                ? 'No stored properties.'
                : html`<details><summary>${Object.keys(row.properties).length} properties</summary>
                  <pre>${JSON.stringify(row.properties, null, 2)}</pre></details>`
            }</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <p class="hint">From the <code>$groups</code> of its recent events.</p>`}
  <//>`
}
