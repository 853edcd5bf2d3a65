// A confirmation in the native modal <dialog>: it traps the focus, Escape cancels, and the focus
// goes back to the control that opened it when it closes.
import { useEffect, useRef } from './vendor/hooks.js'
import { html } from './html.js'

export function ConfirmDialog({ title, message, confirmLabel, onConfirm, onCancel, busy, error }) {
  const ref = useRef(null)
  useEffect(() => {
    const dialog = ref.current
    const opener = document.activeElement
    dialog.showModal()
    return () => {
      if (dialog.open) dialog.close()
      opener?.focus?.()
    }
  }, [])
  const cancel = (event) => {
    event.preventDefault()
    onCancel()
  }
  return html`<dialog ref=${ref} aria-labelledby="confirm-title" aria-describedby="confirm-message" onCancel=${cancel}>
    <h2 id="confirm-title">${title}</h2>
    <p id="confirm-message">${message}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div class="row">
      <button type="button" class="primary" disabled=${busy} onClick=${onConfirm}>${confirmLabel}</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </dialog>`
}
