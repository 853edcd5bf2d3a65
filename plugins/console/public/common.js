// Pieces every page uses: loading data with its error, the project's sub-navigation, and the
// error message shown next to a field (found again by `aria-describedby`).
import { useCallback, useEffect, useRef, useState } from './vendor/hooks.js'
import { html } from './html.js'

/**
 * `load()` run on mount and whenever `deps` change; `reload()` runs it again. Only the latest run's
 * answer is shown: an earlier one arriving after it (a page clicked past) is dropped.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true })
  const latest = useRef(0)
  const run = useCallback(() => {
    const mine = ++latest.current
    const settle = (next) => mine === latest.current && setState(next)
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => settle({ data, error: null, loading: false }),
      (error) => settle({ data: undefined, error, loading: false }),
    )
  }, deps)
  useEffect(run, [run])
  return { ...state, reload: run }
}

export function Loading({ state, children }) {
  if (state.error) return html`<p class="error" role="alert">Could not load: ${state.error.message}</p>`
  if (state.data === undefined) return html`<p role="status">Loading…</p>`
  return children(state.data)
}

export function ProjectNav({ project, current }) {
  const base = `#/projects/${project.id}`
  const link = (href, label, name) =>
    html`<a href=${href} aria-current=${current === name ? 'page' : undefined}>${label}</a>`
  return html`<nav aria-label="Project" class="subnav">
    ${link(base, 'Overview', 'overview')} ${link(`${base}/flags`, 'Feature flags', 'flags')}
    ${link(`${base}/cohorts`, 'Cohorts', 'cohorts')} ${link(`${base}/persons`, 'Persons', 'persons')} ${link(`${base}/try`, 'Try a flag', 'try')} ${link(`${base}/live`, 'Live events', 'live')}
    ${link(`${base}/health`, 'Ingestion health', 'health')}
  </nav>`
}

/** The id of the element holding the error of field `id`. */
export const errorId = (id) => `${id}-error`

export function FieldError({ id, message }) {
  if (!message) return null
  return html`<p id=${errorId(id)} class="error field-error">${message}</p>`
}

/** Attributes that tie a control to its error message. */
export function invalid(id, message) {
  return message ? { 'aria-invalid': 'true', 'aria-describedby': errorId(id) } : {}
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text)
    return 'Copied.'
  } catch {
    return 'Copying is not allowed here: select the text and copy it.'
  }
}
