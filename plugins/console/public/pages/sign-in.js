import { useState } from '../vendor/hooks.js'
import { adminKey, checkKey } from '../api.js'
import { html } from '../html.js'

export function SignIn({ notice, onSignedIn }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    setBusy(true)
    setError('')
    try {
      if (await checkKey(key.trim())) {
        adminKey.set(key.trim())
        onSignedIn()
      } else setError('Wrong admin key: the service refused it.')
    } catch (failure) {
      setError(failure.message)
    } finally {
      setBusy(false)
    }
  }
  return html`
    <main class="sign-in">
      <h1 tabindex="-1">Hedgerow console</h1>
      <p>Sign in with the service's admin key (<code>ADMIN_API_KEY</code>, or <code>npm run cli -- admin-key</code>).
        It is kept in this tab only, until you sign out or close it.</p>
      ${notice && html`<p role="status">${notice}</p>`}
      <form onSubmit=${submit}>
        <label for="admin-key">Admin key</label>
        <input id="admin-key" type="password" autocomplete="off" required value=${key}
          aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? 'admin-key-error' : undefined}
          onInput=${(e) => setKey(e.currentTarget.value)} />
        ${error && html`<p id="admin-key-error" class="error" role="alert">${error}</p>`}
        <button type="submit" disabled=${busy}>Sign in</button>
      </form>
    </main>
  `
}
