// "Try a flag": every flag of the project for one visitor, as an SDK would get them, with the
// payload and the reason. Person properties, groups (type, key and properties) and an IP are typed
// in a form, not as JSON.
import { useState } from '../vendor/hooks.js'
import { api, tryFlags } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { html } from '../html.js'

function Rows({ id, title, nameLabel, valueLabel, rows, onChange }) {
  const set = (i, row) => onChange(rows.map((r, k) => (k === i ? row : r)))
  return html`<fieldset>
    <legend>${title}</legend>
    ${rows.map(
      (row, i) => html`<div class="row">
        <div class="field">
          <label for=${`${id}-${i}-name`}>${nameLabel} ${i + 1}</label>
          <input id=${`${id}-${i}-name`} value=${row.name} onInput=${(e) => set(i, { ...row, name: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for=${`${id}-${i}-value`}>${valueLabel} ${i + 1}</label>
          <input id=${`${id}-${i}-value`} value=${row.value} onInput=${(e) => set(i, { ...row, value: e.currentTarget.value })} />
        </div>
        <button type="button" onClick=${() => onChange(rows.filter((_, k) => k !== i))}>Remove ${nameLabel.toLowerCase()} ${i + 1}</button>
      </div>`,
    )}
    <button type="button" onClick=${() => onChange([...rows, { name: '', value: '' }])}>Add ${nameLabel.toLowerCase()}</button>
  </fieldset>`
}

const toObject = (rows) =>
  Object.fromEntries(rows.filter((r) => r.name.trim() !== '').map((r) => [r.name.trim(), r.value]))

function shown(value) {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Where each property the flags were matched against came from (dry run only). */
export function PropertySources({ properties }) {
  const rows = [
    ...Object.entries(properties.person ?? {}).map(([key, p]) => ['person', key, p]),
    ...Object.entries(properties.groups ?? {}).flatMap(([type, props]) =>
      Object.entries(props).map(([key, p]) => [`group ${type}`, key, p]),
    ),
  ]
  if (rows.length === 0) return html`<p>No property was needed or known.</p>`
  return html`<table>
    <caption>Properties used, and where they came from</caption>
    <thead><tr><th scope="col">Of</th><th scope="col">Property</th><th scope="col">Value</th><th scope="col">Source</th></tr></thead>
    <tbody>
      ${rows.map(
        ([of, key, p]) => html`<tr><td>${of}</td><th scope="row"><code>${key}</code></th>
          <td><code>${shown(p.value)}</code></td><td>${p.source}</td></tr>`,
      )}
    </tbody>
  </table>`
}

export function Results({ results }) {
  if (results.length === 0) return html`<p>The project has no active flag.</p>`
  return html`<table>
    <caption class="visually-hidden">Flag values</caption>
    <thead><tr><th scope="col">Flag</th><th scope="col">Value</th><th scope="col">Payload</th><th scope="col">Reason</th></tr></thead>
    <tbody>
      ${results.map(
        (r) => html`<tr>
          <th scope="row"><code>${r.key}</code></th>
          <td><code>${shown(r.value)}</code></td>
          <td>${r.payload === null ? html`<span class="hint">none</span>` : html`<pre>${shown(r.payload)}</pre>`}</td>
          <td>${r.reason}${r.detail && r.detail !== r.reason ? html`<p class="hint">${r.detail}</p>` : ''}</td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

/**
 * The groups of the request: for each, a group type of the project, its key, and properties that
 * override the group's stored ones (as `group_properties` does in /flags).
 */
function Groups({ groupTypes, groups, onChange }) {
  const set = (i, group) => onChange(groups.map((g, k) => (k === i ? group : g)))
  if (groupTypes.length === 0)
    return html`<fieldset><legend>Groups</legend>
      <p class="hint">This project has no group types yet: they appear once events name groups (<code>$groups</code> or <code>$groupidentify</code>).</p>
    </fieldset>`
  const unused = groupTypes.filter((t) => !groups.some((g) => g.type === t.group_type))
  return html`<fieldset>
    <legend>Groups</legend>
    ${groups.map(
      (group, i) => html`<fieldset>
        <legend>Group ${i + 1}</legend>
        <div class="row">
          <div class="field">
            <label for=${`try-group-${i}-type`}>Group type ${i + 1}</label>
            <select id=${`try-group-${i}-type`} value=${group.type} onChange=${(e) => set(i, { ...group, type: e.currentTarget.value })}>
              ${groupTypes.map((t) => html`<option value=${t.group_type}>${t.group_type}</option>`)}
            </select>
          </div>
          <div class="field">
            <label for=${`try-group-${i}-key`}>Group key ${i + 1}</label>
            <input id=${`try-group-${i}-key`} value=${group.key} onInput=${(e) => set(i, { ...group, key: e.currentTarget.value })} />
          </div>
        </div>
        <${Rows} id=${`try-group-${i}-prop`} title=${`Properties of group ${i + 1}`} nameLabel=${`Group ${i + 1} property`}
          valueLabel=${`Group ${i + 1} property value`} rows=${group.properties} onChange=${(properties) => set(i, { ...group, properties })} />
        <button type="button" onClick=${() => onChange(groups.filter((_, k) => k !== i))}>Remove group ${i + 1}</button>
      </fieldset>`,
    )}
    <p class="hint">The stored properties of each group are used, as the flags endpoint does; the ones given here override them.</p>
    ${
      unused.length > 0 &&
      html`<button type="button" onClick=${() => onChange([...groups, { type: unused[0].group_type, key: '', properties: [] }])}>Add group</button>`
    }
  </fieldset>`
}

/** `groups` and `group_properties` as /flags takes them, from the rows (a group without a key is left out). */
function groupsRequest(groups) {
  const named = groups.filter((g) => g.key.trim() !== '')
  return {
    groups: Object.fromEntries(named.map((g) => [g.type, g.key.trim()])),
    groupProperties: Object.fromEntries(
      named.map((g) => [g.type, toObject(g.properties)]).filter(([, properties]) => Object.keys(properties).length > 0),
    ),
  }
}

function TryForm({ project, groupTypes }) {
  const [distinctId, setDistinctId] = useState('')
  const [properties, setProperties] = useState([])
  const [groups, setGroups] = useState([])
  const [ip, setIp] = useState('')
  const [outcome, setOutcome] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    setBusy(true)
    try {
      const results = await tryFlags(project, {
        distinctId: distinctId.trim(),
        personProperties: toObject(properties),
        ...groupsRequest(groups),
        ip: ip.trim(),
      })
      setOutcome({ ...results, distinctId: distinctId.trim() })
    } catch (error) {
      setOutcome({ error })
    } finally {
      setBusy(false)
    }
  }
  return html`
    <form onSubmit=${submit}>
      <div class="field">
        <label for="try-distinct-id">Distinct id</label>
        <input id="try-distinct-id" required value=${distinctId} onInput=${(e) => setDistinctId(e.currentTarget.value)} />
        <p class="hint">Stored person properties of this distinct id are used, as the flags endpoint does; the ones below override them.</p>
      </div>
      <${Rows} id="try-prop" title="Person properties" nameLabel="Property" valueLabel="Property value"
        rows=${properties} onChange=${setProperties} />
      <${Groups} groupTypes=${groupTypes} groups=${groups} onChange=${setGroups} />
      <div class="field">
        <label for="try-ip">IP address (optional)</label>
        <input id="try-ip" value=${ip} inputmode="decimal" autocomplete="off" onInput=${(e) => setIp(e.currentTarget.value)} />
        <p class="hint">Flags matching <code>$geoip_*</code> person properties see the location of this address, when the geoip plugin runs.</p>
      </div>
      <button type="submit" disabled=${busy}>Evaluate flags</button>
    </form>
    <section aria-labelledby="try-results-heading" aria-live="polite">
      <h2 id="try-results-heading">Flag values${outcome?.distinctId ? ` for ${outcome.distinctId}` : ''}</h2>
      ${!outcome && html`<p>Fill in a distinct id and evaluate.</p>`}
      ${outcome?.error && html`<p class="error" role="alert">${outcome.error.message}</p>`}
      ${outcome?.flags && html`<${Results} results=${outcome.flags} />`}
      ${outcome?.properties && html`<${PropertySources} properties=${outcome.properties} />`}
      ${
        outcome?.source === '/flags' &&
        html`<p class="hint">Answered by /flags as an SDK gets it. This service has no flag dry run
        (<code>POST …/feature_flags/evaluate/</code>), so each condition set's verdict and the source of each property are not shown.</p>`
      }
    </section>
  `
}

export function TryFlagsPage({ projectId }) {
  const state = useLoad(
    () => Promise.all([api.project(projectId), api.groupTypes(projectId).catch(() => [])]),
    [projectId],
  )
  return html`<${Loading} state=${state}>
    ${([p, groupTypes]) => html`
      <h1 tabindex="-1">Try the flags of ${p.name}</h1>
      <${ProjectNav} project=${p} current="try" />
      <${TryForm} project=${p} groupTypes=${groupTypes} />
    `}
  <//>`
}
