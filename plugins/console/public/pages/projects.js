import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { FieldError, Loading, invalid, useLoad } from '../common.js'
import { html } from '../html.js'
import { navigate } from '../router.js'

const TIMEZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')]

function CreateProject() {
  const [name, setName] = useState('')
  const [timezone, setTimezone] = useState('UTC')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const project = await api.createProject({ name, timezone })
      navigate(`/projects/${project.id}`)
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  const fieldError = (field) => (error?.attr === field ? error.message : null)
  return html`
    <section aria-labelledby="create-project-heading">
      <h2 id="create-project-heading">Create a project</h2>
      <form onSubmit=${submit} class="inline-form">
        <div class="field">
          <label for="project-name">Name</label>
          <input id="project-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)}
            ...${invalid('project-name', fieldError('name'))} />
          <${FieldError} id="project-name" message=${fieldError('name')} />
        </div>
        <div class="field">
          <label for="project-timezone">Timezone</label>
          <select id="project-timezone" value=${timezone} onChange=${(e) => setTimezone(e.currentTarget.value)}
            ...${invalid('project-timezone', fieldError('timezone'))}>
            ${TIMEZONES.map((zone) => html`<option value=${zone}>${zone}</option>`)}
          </select>
          <${FieldError} id="project-timezone" message=${fieldError('timezone')} />
        </div>
        <button type="submit" disabled=${busy}>Create project</button>
      </form>
      ${error && !error.attr && html`<p class="error" role="alert">${error.message}</p>`}
    </section>
  `
}

export function ProjectsPage() {
  const projects = useLoad(() => api.projects(), [])
  return html`
    <h1 tabindex="-1">Projects</h1>
    <section aria-labelledby="project-list-heading">
      <h2 id="project-list-heading">All projects</h2>
      <${Loading} state=${projects}>
        ${(list) =>
          list.length === 0
            ? html`<p>No project yet: create the first one below.</p>`
            : html`<table>
                <caption class="visually-hidden">Projects</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Timezone</th>
                  <th scope="col">Public key</th></tr></thead>
                <tbody>
                  ${list.map(
                    (p) => html`<tr>
                      <th scope="row"><a href=${`#/projects/${p.id}`}>${p.name}</a></th>
                      <td>${p.id}</td><td>${p.timezone}</td><td><code>${p.api_token}</code></td>
                    </tr>`,
                  )}
                </tbody>
              </table>`}
      <//>
    </section>
    <${CreateProject} />
  `
}
