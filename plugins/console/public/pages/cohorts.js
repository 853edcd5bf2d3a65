// Cohorts of a project: the list, and creating one, either from person-property filters (the flag
// editor's filter rows; all must match) or as a static list of distinct ids pasted or read from a
// CSV file. A flag uses a cohort through a filter of type "Cohort". Each cohort's own page (cohort.js)
// edits, deletes and lists its members and the flags using it.
import { useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { FieldError, Loading, ProjectNav, invalid, useLoad } from '../common.js'
import { newFilter } from '../flag-model.js'
import { html } from '../html.js'
import { FilterRow } from './flag-conditions.js'

export const PERSON_ONLY = [['person', 'Person property']]

/** Distinct ids from pasted text or a CSV file: one per line or cell, the header `distinct_id` left out. */
export function distinctIdsIn(text) {
  const cells = text
    .split(/[\r\n,;\t]+/)
    .map((cell) => cell.trim().replace(/^"(.*)"$/, '$1'))
    .filter((cell) => cell !== '' && cell !== 'distinct_id')
  return [...new Set(cells)]
}

function CohortTable({ projectId, cohorts }) {
  if (cohorts.length === 0) return html`<p>No cohort yet.</p>`
  return html`<table>
    <caption class="visually-hidden">Cohorts</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">Members</th></tr></thead>
    <tbody>
      ${cohorts.map(
        (c) => html`<tr>
          <th scope="row"><a href=${`#/projects/${projectId}/cohorts/${c.id}`}>${c.name}</a></th><td>${c.id}</td><td>${c.is_static ? 'static list' : 'by properties'}</td>
          <td>${c.is_static ? c.count : html`<span class="hint">computed per request</span>`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`
}

function CreateCohort({ project, onCreated }) {
  const [name, setName] = useState('')
  const [kind, setKind] = useState('properties')
  const [filters, setFilters] = useState([newFilter('person')])
  const [idsText, setIdsText] = useState('')
  const [error, setError] = useState(null)
  const [status, setStatus] = useState('')
  const ids = distinctIdsIn(idsText)
  const readFile = async (event) => {
    const file = event.currentTarget.files?.[0]
    if (file) setIdsText(await file.text())
  }
  const submit = async (event) => {
    event.preventDefault()
    setError(null)
    const body =
      kind === 'static'
        ? { name, is_static: true, distinct_ids: ids }
        : { name, filters: { properties: { type: 'AND', values: filters } } }
    try {
      const created = await api.createCohort(project.id, body)
      setStatus(`Created cohort ${created.name} (id ${created.id}).`)
      setName('')
      setIdsText('')
      setFilters([newFilter('person')])
      onCreated()
    } catch (failure) {
      setError(failure)
    }
  }
  const fieldError = (attr) => (error?.attr === attr ? error.message : null)
  return html`<section aria-labelledby="create-cohort-heading">
    <h2 id="create-cohort-heading">Create a cohort</h2>
    <form onSubmit=${submit}>
      <div class="field">
        <label for="cohort-name">Cohort name</label>
        <input id="cohort-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)}
          ...${invalid('cohort-name', fieldError('name'))} />
        <${FieldError} id="cohort-name" message=${fieldError('name')} />
      </div>
      <fieldset>
        <legend>Kind</legend>
        <input type="radio" id="kind-properties" name="kind" checked=${kind === 'properties'} onChange=${() => setKind('properties')} />
        <label for="kind-properties" class="inline">Persons matching properties</label>
        <input type="radio" id="kind-static" name="kind" checked=${kind === 'static'} onChange=${() => setKind('static')} />
        <label for="kind-static" class="inline">A list of distinct ids</label>
      </fieldset>
      ${
        kind === 'properties'
          ? html`<p class="hint">A person is in the cohort when every filter matches.</p>
            ${filters.map(
              (
                filter,
                j,
              ) => html`<${FilterRow} id=${`cohort-f${j}`} path=${`filters.properties.values.${j}`} number=${j + 1}
                filter=${filter} errors=${{}} context=${{ cohorts: [], groupTypes: [], flags: [] }} types=${PERSON_ONLY}
                onChange=${(f) => setFilters(filters.map((g, k) => (k === j ? f : g)))}
                onRemove=${() => setFilters(filters.filter((_, k) => k !== j))} />`,
            )}
            <button type="button" onClick=${() => setFilters([...filters, newFilter('person')])}>Add filter to the cohort</button>`
          : html`<div class="field">
              <label for="cohort-ids">Distinct ids, one per line (or comma-separated)</label>
              <textarea id="cohort-ids" rows="5" value=${idsText} onInput=${(e) => setIdsText(e.currentTarget.value)}
                ...${invalid('cohort-ids', fieldError('distinct_ids'))}></textarea>
              <${FieldError} id="cohort-ids" message=${fieldError('distinct_ids')} />
            </div>
            <div class="field">
              <label for="cohort-file">Or read them from a CSV file</label>
              <input id="cohort-file" type="file" accept=".csv,.txt,text/csv,text/plain" onChange=${readFile} />
            </div>
            <p role="status">${ids.length} distinct id${ids.length === 1 ? '' : 's'}</p>`
      }
      ${error && html`<p class="error" role="alert">Not created: ${error.message}</p>`}
      <div class="row">
        <button type="submit">Create cohort</button>
        <span role="status">${status}</span>
      </div>
    </form>
  </section>`
}

export function CohortsPage({ projectId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  const cohorts = useLoad(() => api.cohorts(projectId), [projectId])
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Cohorts of ${p.name}</h1>
      <${ProjectNav} project=${p} current="cohorts" />
      <section aria-labelledby="cohort-list-heading">
        <h2 id="cohort-list-heading">All cohorts</h2>
        <${Loading} state=${cohorts}>${(list) => html`<${CohortTable} projectId=${p.id} cohorts=${list} />`}<//>
      </section>
      <${CreateCohort} project=${p} onCreated=${cohorts.reload} />
    `}
  <//>`
}
