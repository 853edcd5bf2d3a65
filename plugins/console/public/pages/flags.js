import { useEffect, useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { ConfirmDialog } from '../dialog.js'
import { rolloutSummary } from '../flag-model.js'
import { html } from '../html.js'

const PAGE_SIZE = 50

function formatTime(iso) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

function FlagTable({ project, flags, onToggle }) {
  if (flags.length === 0) return html`<p>No flag matches.</p>`
  return html`<table>
    <caption class="visually-hidden">Feature flags</caption>
    <thead>
      <tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Active</th><th scope="col">Rollout</th>
        <th scope="col">Last change</th></tr>
    </thead>
    <tbody>
      ${flags.map(
        (flag) => html`<tr>
          <th scope="row"><a href=${`#/projects/${project.id}/flags/${flag.id}`}><code>${flag.key}</code></a></th>
          <td>${flag.name}</td>
          <td>
            <span>${flag.active ? 'On' : 'Off'}</span>${' '}
            <button type="button" class=${flag.active ? 'danger' : ''} onClick=${() => onToggle(flag)}>
              ${flag.active ? 'Disable' : 'Enable'}<span class="visually-hidden"> ${flag.key}</span>
            </button>
          </td>
          <td>${rolloutSummary(flag)}</td>
          <td><time datetime=${flag.updated_at}>${formatTime(flag.updated_at)}</time></td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

function ToggleDialog({ project, flag, onDone, onCancel }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const next = !flag.active
  const confirm = async () => {
    setBusy(true)
    try {
      await api.updateFlag(project.id, flag.id, { active: next, version: flag.version })
      onDone()
    } catch (failure) {
      setError(failure.status === 409 ? `${failure.message}. Close and look again.` : failure.message)
      setBusy(false)
    }
  }
  return html`<${ConfirmDialog}
    title=${`${next ? 'Enable' : 'Disable'} ${flag.key}?`}
    message=${
      next
        ? 'The flag is served again, by its conditions, to every SDK within a second or two.'
        : 'Every user gets false for this flag from the next request on.'
    }
    confirmLabel=${next ? 'Enable flag' : 'Disable flag'}
    busy=${busy}
    error=${error}
    onConfirm=${confirm}
    onCancel=${onCancel}
  />`
}

// The pager's buttons are aria-disabled, not disabled, at the first and last page: a disabled
// button drops the keyboard focus to the page's start, so the next Tab would not reach the pager.
function FlagList({ project }) {
  const [search, setSearch] = useState('')
  const [query, setQuery] = useState('')
  const [offset, setOffset] = useState(0)
  const [toggling, setToggling] = useState(null)
  // the list is asked for 250 ms after the last keystroke, not on every one; only a changed text
  // goes back to the first page (not the page shown when the list opened)
  useEffect(() => {
    const text = search.trim()
    if (text === query) return
    const timer = setTimeout(() => (setQuery(text), setOffset(0)), 250)
    return () => clearTimeout(timer)
  }, [search, query])
  // the answer carries the offset it was asked for: the pager describes the rows shown, not the
  // page asked for while it loads
  const flags = useLoad(
    () => api.flags(project.id, { limit: PAGE_SIZE, offset, search: query }).then((page) => ({ ...page, offset })),
    [project.id, offset, query],
  )
  return html`
    <div class="toolbar">
      <div class="field">
        <label for="flag-search">Search flags</label>
        <input id="flag-search" type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} />
      </div>
      <a href=${`#/projects/${project.id}/flags/new`} class="button-link">New flag</a>
    </div>
    <${Loading} state=${flags}>
      ${(result) => html`
        <p role="status">${result.count} flag${result.count === 1 ? '' : 's'}${query ? html` matching “${query}”` : ''}</p>
        <${FlagTable} project=${project} flags=${result.results} onToggle=${setToggling} />
        ${
          (result.next || result.previous) &&
          html`<nav class="pager" aria-label="Flag pages">
          <button type="button" aria-disabled=${!result.previous} onClick=${() => result.previous && setOffset(Math.max(offset - PAGE_SIZE, 0))}>
            Previous page
          </button>
          <span>${result.offset + 1}–${result.offset + result.results.length} of ${result.count}</span>
          <button type="button" aria-disabled=${!result.next} onClick=${() => result.next && setOffset(offset + PAGE_SIZE)}>Next page</button>
        </nav>`
        }
      `}
    <//>
    ${
      toggling &&
      html`<${ToggleDialog} project=${project} flag=${toggling}
      onDone=${() => (setToggling(null), flags.reload())} onCancel=${() => setToggling(null)} />`
    }
  `
}

export function FlagsPage({ projectId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Feature flags of ${p.name}</h1>
      <${ProjectNav} project=${p} current="flags" />
      <${FlagList} project=${p} />
    `}
  <//>`
}
