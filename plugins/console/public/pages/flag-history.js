// A flag's history from the audit log (`GET /api/projects/:id/audit?entity_type=feature_flag&…`):
// who changed what and when, each change as a before/after difference, and restoring an earlier
// version (`POST …/feature_flags/:id/restore/`). A service without the audit routes answers 404,
// and the section says so instead of failing.
import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { useLoad } from '../common.js'
import { ConfirmDialog } from '../dialog.js'
import { html } from '../html.js'

const shown = (value) => (value === undefined ? '(absent)' : JSON.stringify(value))

function Changes({ record }) {
  const changes = record.changes ?? []
  if (record.action === 'created') return html`<span>created</span>`
  if (changes.length === 0) return html`<span class="hint">no field changed</span>`
  return html`<ul class="diff">
    ${changes.map(
      (c) => html`<li>
        <code>${c.path}</code>: ${'before' in c && html`<del>${shown(c.before)}</del>`}
        ${' → '}${'after' in c ? html`<ins>${shown(c.after)}</ins>` : html`<span class="hint">removed</span>`}
      </li>`,
    )}
  </ul>`
}

function RestoreDialog({ project, flag, toVersion, onDone, onCancel }) {
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const confirm = async () => {
    setBusy(true)
    try {
      await api.restoreFlag(project.id, flag.id, { to_version: toVersion, version: flag.version })
      onDone()
    } catch (failure) {
      setError(failure.message)
      setBusy(false)
    }
  }
  return html`<${ConfirmDialog} title=${`Restore version ${toVersion} of ${flag.key}?`} confirmLabel="Restore"
    message=${`The flag becomes what it was at version ${toVersion}, as a new version ${flag.version + 1}; nothing of the history is lost.`}
    busy=${busy} error=${error} onConfirm=${confirm} onCancel=${onCancel} />`
}

export function FlagHistory({ project, flag, onRestored }) {
  const history = useLoad(() => api.flagHistory(project.id, flag.id), [project.id, flag.id, flag.version])
  const [restoring, setRestoring] = useState(null)
  let body
  if (history.error?.status === 404)
    body = html`<p class="hint">This service keeps no audit log yet (no <code>/api/projects/:id/audit</code> route), so there is no history to show.</p>`
  else if (history.error)
    body = html`<p class="error" role="alert">Could not load the history: ${history.error.message}</p>`
  else if (history.data === undefined) body = html`<p role="status">Loading…</p>`
  else if (history.data.results.length === 0) body = html`<p>No recorded change.</p>`
  else
    body = html`<table>
      <caption class="visually-hidden">Changes of ${flag.key}</caption>
      <thead><tr><th scope="col">Version</th><th scope="col">When</th><th scope="col">By</th><th scope="col">What</th>
        <th scope="col">Changes</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        ${history.data.results.map(
          (record) => html`<tr>
            <th scope="row">${record.version ?? ''}</th>
            <td><time datetime=${record.created_at}>${new Date(record.created_at).toLocaleString()}</time></td>
            <td>${record.actor?.key_label ?? ''}</td>
            <td>${record.action}${record.details?.restored_version !== undefined ? ` (to version ${record.details.restored_version})` : ''}</td>
            <td><${Changes} record=${record} /></td>
            <td>${
              record.version !== null &&
              record.version !== flag.version &&
              record.action !== 'deleted' &&
              html`<button type="button" onClick=${() => setRestoring(record.version)}>Restore version ${record.version}</button>`
            }</td>
          </tr>`,
        )}
      </tbody>
    </table>`
  return html`<section aria-labelledby="history-heading">
    <h2 id="history-heading">History</h2>
    ${body}
    ${
      restoring !== null &&
      html`<${RestoreDialog} project=${project} flag=${flag} toVersion=${restoring}
      onCancel=${() => setRestoring(null)} onDone=${() => (setRestoring(null), onRestored())} />`
    }
  </section>`
}
