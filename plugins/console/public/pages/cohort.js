// One cohort: edit its name (and, for a cohort by properties, its filters, with the flag editor's
// filter rows), add or remove members of a static cohort, see the flags that use it, delete it.
// Every change sends the version it was made against, so a concurrent edit is refused, not overwritten.
import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { FieldError, Loading, ProjectNav, invalid, useLoad } from '../common.js'
import { ConfirmDialog } from '../dialog.js'
import { flagsUsingCohort, newFilter } from '../flag-model.js'
import { html } from '../html.js'
import { navigate } from '../router.js'
import { FilterRow } from './flag-conditions.js'
import { PERSON_ONLY, distinctIdsIn } from './cohorts.js'

/** How many members the page lists (the count is always the whole). */
const LISTED = 100

function EditCohort({ project, cohort, onSaved, savedNotice }) {
  const [name, setName] = useState(cohort.name)
  const [filters, setFilters] = useState(cohort.filters?.properties?.values ?? [])
  const [error, setError] = useState(null)
  const submit = async (event) => {
    event.preventDefault()
    setError(null)
    const body = { name, version: cohort.version }
    if (!cohort.is_static)
      body.filters = { properties: { ...cohort.filters?.properties, type: 'AND', values: filters } }
    try {
      onSaved(await api.updateCohort(project.id, cohort.id, body))
    } catch (failure) {
      setError(failure)
    }
  }
  const fieldError = (attr) => (error?.attr === attr ? error.message : null)
  return html`<section aria-labelledby="edit-cohort-heading">
    <h2 id="edit-cohort-heading">Edit</h2>
    <form onSubmit=${submit}>
      <div class="field">
        <label for="edit-cohort-name">Cohort name</label>
        <input id="edit-cohort-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)}
          ...${invalid('edit-cohort-name', fieldError('name'))} />
        <${FieldError} id="edit-cohort-name" message=${fieldError('name')} />
      </div>
      ${
        !cohort.is_static &&
        html`<p class="hint">A person is in the cohort when every filter matches.</p>
        ${filters.map(
          (
            filter,
            j,
          ) => html`<${FilterRow} id=${`edit-cohort-f${j}`} path=${`filters.properties.values.${j}`} number=${j + 1}
            filter=${filter} errors=${{}} context=${{ cohorts: [], groupTypes: [], flags: [] }} types=${PERSON_ONLY}
            onChange=${(f) => setFilters(filters.map((g, k) => (k === j ? f : g)))}
            onRemove=${() => setFilters(filters.filter((_, k) => k !== j))} />`,
        )}
        <button type="button" onClick=${() => setFilters([...filters, newFilter('person')])}>Add filter to the cohort</button>`
      }
      ${error && html`<p class="error" role="alert">Not saved: ${error.message}</p>`}
      <div class="row">
        <button type="submit">Save cohort</button>
        <span role="status">${savedNotice}</span>
      </div>
    </form>
  </section>`
}

function Members({ project, cohort, onChanged }) {
  const members = useLoad(() => api.cohortMembers(project.id, cohort.id, LISTED), [project.id, cohort.id, cohort.count])
  const [text, setText] = useState('')
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')
  const ids = distinctIdsIn(text)
  const readFile = async (event) => {
    const file = event.currentTarget.files?.[0]
    if (file) setText(await file.text())
  }
  const change = async (adding) => {
    setError('')
    try {
      const answer = adding
        ? await api.addCohortMembers(project.id, cohort.id, ids)
        : await api.removeCohortMembers(project.id, cohort.id, ids)
      setStatus(adding ? `Added ${answer.added} new member(s).` : `Removed ${answer.removed} member(s).`)
      setText('')
      onChanged()
    } catch (failure) {
      setError(failure.message)
    }
  }
  return html`<section aria-labelledby="members-heading">
    <h2 id="members-heading">Members (${cohort.count})</h2>
    <${Loading} state=${members}>
      ${(page) =>
        page.results.length === 0
          ? html`<p>No member yet.</p>`
          : html`<ul aria-label="Members">${page.results.map((id) => html`<li>${id}</li>`)}</ul>
            ${page.next && html`<p class="hint">The first ${LISTED} are listed.</p>`}`}
    <//>
    <div class="field">
      <label for="member-ids">Distinct ids to add or remove, one per line (or comma-separated)</label>
      <textarea id="member-ids" rows="4" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    </div>
    <div class="field">
      <label for="member-file">Or read them from a CSV file</label>
      <input id="member-file" type="file" accept=".csv,.txt,text/csv,text/plain" onChange=${readFile} />
    </div>
    <p role="status">${ids.length} distinct id${ids.length === 1 ? '' : 's'} entered</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div class="row">
      <button type="button" disabled=${ids.length === 0} onClick=${() => change(true)}>Add members</button>
      <button type="button" disabled=${ids.length === 0} onClick=${() => change(false)}>Remove members</button>
      <span role="status">${status}</span>
    </div>
  </section>`
}

function UsedBy({ project, cohort }) {
  const flags = useLoad(() => api.allFlags(project.id), [project.id])
  return html`<section aria-labelledby="used-by-heading">
    <h2 id="used-by-heading">Used by</h2>
    <${Loading} state=${flags}>
      ${(all) => {
        const using = flagsUsingCohort(all, cohort.id)
        if (using.length === 0) return html`<p>No flag uses this cohort.</p>`
        return html`<ul aria-label="Flags using this cohort">
          ${using.map((f) => html`<li><a href=${`#/projects/${project.id}/flags/${f.id}`}>${f.key}</a></li>`)}
        </ul>`
      }}
    <//>
  </section>`
}

function DeleteDialog({ project, cohort, onCancel }) {
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const confirm = async () => {
    setBusy(true)
    try {
      await api.deleteCohort(project.id, cohort.id, cohort.version)
      navigate(`/projects/${project.id}/cohorts`)
    } catch (failure) {
      setError(failure.message)
      setBusy(false)
    }
  }
  return html`<${ConfirmDialog} title=${`Delete ${cohort.name}?`} confirmLabel="Delete cohort" busy=${busy} error=${error}
    message="Flags whose conditions name it no longer match anyone through it, from the next request on."
    onConfirm=${confirm} onCancel=${onCancel} />`
}

export function CohortPage({ projectId, cohortId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  const loaded = useLoad(() => api.cohort(projectId, cohortId), [projectId, cohortId])
  const [deleting, setDeleting] = useState(false)
  // kept here: the form is rebuilt from each new version, which would lose its own status line
  const [savedNotice, setSavedNotice] = useState('')
  const saved = (cohort) => {
    setSavedNotice(`Saved: version ${cohort.version}.`)
    loaded.reload()
  }
  return html`<${Loading} state=${project}>
    ${(p) => html`<${Loading} state=${loaded}>
      ${(cohort) => html`
        <h1 tabindex="-1">Cohort ${cohort.name}</h1>
        <${ProjectNav} project=${p} current="cohorts" />
        <p>${cohort.is_static ? 'A static list of distinct ids' : 'Persons matching properties'}, id ${cohort.id}, version ${cohort.version}.</p>
        <${EditCohort} key=${cohort.version} project=${p} cohort=${cohort} onSaved=${saved} savedNotice=${savedNotice} />
        ${cohort.is_static && html`<${Members} project=${p} cohort=${cohort} onChanged=${loaded.reload} />`}
        <${UsedBy} project=${p} cohort=${cohort} />
        <div class="row">
          <button type="button" class="danger" onClick=${() => setDeleting(true)}>Delete cohort</button>
        </div>
        ${deleting && html`<${DeleteDialog} project=${p} cohort=${cohort} onCancel=${() => setDeleting(false)} />`}
      `}
    <//>`}
  <//>`
}
