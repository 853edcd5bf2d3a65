// Create or change one flag without typing JSON; a JSON view of the same flag, kept in sync, for
// those who prefer it. Errors found here and those the API answers (`attr`) show next to their field.
import { useEffect, useState } from '../vendor/hooks.js'
import { api } from '../api.js'
import { FieldError, Loading, ProjectNav, invalid, useLoad } from '../common.js'
import {
  controlOf,
  fieldPathOf,
  flagBody,
  localErrors,
  newFlag,
  payloadTextsOf,
  variantsOf,
  withPayloads,
} from '../flag-model.js'
import { html } from '../html.js'
import { ConfirmDialog } from '../dialog.js'
import { navigate } from '../router.js'
import { ConditionSets } from './flag-conditions.js'
import { FlagHistory } from './flag-history.js'
import { Holdout } from './flag-holdout.js'
import { Variants } from './flag-variants.js'

function JsonView({ flag, texts, onParsed }) {
  const [draft, setDraft] = useState(null)
  const [error, setError] = useState('')
  const text = draft ?? JSON.stringify(flagBody(withPayloads(flag, texts)), null, 2)
  const edit = (value) => {
    setDraft(value)
    try {
      const parsed = JSON.parse(value)
      if (typeof parsed !== 'object' || parsed === null || typeof parsed.filters !== 'object')
        throw new Error('a flag is an object with "filters"')
      setError('')
      onParsed(parsed)
    } catch (failure) {
      setError(`Not applied: ${failure.message}`)
    }
  }
  return html`<section aria-labelledby="json-heading">
    <h2 id="json-heading">JSON</h2>
    <label for="flag-json">Flag as JSON (what is sent to the API)</label>
    <textarea id="flag-json" rows="24" spellcheck="false" value=${text} ...${invalid('flag-json', error)}
      onInput=${(e) => edit(e.currentTarget.value)} onBlur=${() => error || setDraft(null)}></textarea>
    <${FieldError} id="flag-json" message=${error} />
  </section>`
}

function Editor({ project, initial, context, onSaved }) {
  const [flag, setFlag] = useState(initial)
  const [texts, setTexts] = useState(() => payloadTextsOf(initial))
  const [apiError, setApiError] = useState(null)
  const [status, setStatus] = useState('')
  const [busy, setBusy] = useState(false)
  const [focusAfterSave, setFocusAfterSave] = useState(null)
  const [attempted, setAttempted] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const isNew = initial.id === undefined
  const local = localErrors(flag, texts)
  // an empty key is not an error yet on a form just opened
  if (isNew && !attempted && flag.key === '') delete local.key
  const errors = { ...local }
  const apiField = apiError?.attr ? fieldPathOf(apiError.attr) : null
  if (apiField && !errors[apiField]) errors[apiField] = apiError.message
  useEffect(() => {
    if (focusAfterSave) document.getElementById(focusAfterSave.id)?.focus()
  }, [focusAfterSave])

  const change = (next) => {
    setFlag(next)
    setStatus('')
    setApiError(null)
  }
  const setFilters = (filters) => change({ ...flag, filters: { ...flag.filters, ...filters } })
  const setVariants = (variants) =>
    setFilters({
      multivariate: variants.length > 0 ? { variants } : null,
      groups: (flag.filters.groups ?? []).map((g) =>
        variants.some((v) => v.key === g.variant) ? g : { ...g, variant: null },
      ),
    })
  const setText = (name, text) => {
    setTexts({ ...texts, [name]: text })
    setStatus('')
  }
  const fromJson = (parsed) => {
    setFlag({ ...flag, ...parsed, id: flag.id, version: flag.version })
    setTexts(payloadTextsOf(parsed))
    setApiError(null)
  }

  const save = async (event) => {
    event.preventDefault()
    setAttempted(true)
    const firstLocal = Object.keys(localErrors(flag, texts))[0]
    if (firstLocal) {
      setStatus('')
      setFocusAfterSave({ id: controlOf(firstLocal) ?? 'flag-key' })
      return
    }
    setBusy(true)
    setApiError(null)
    try {
      const body = flagBody(withPayloads(flag, texts))
      if (isNew) {
        const created = await api.createFlag(project.id, body)
        navigate(`/projects/${project.id}/flags/${created.id}`)
        return
      }
      const saved = await api.updateFlag(project.id, flag.id, body)
      setFlag(saved)
      setTexts(payloadTextsOf(saved))
      onSaved(saved)
      setStatus(`Saved: version ${saved.version}.`)
    } catch (failure) {
      setApiError(failure)
      if (failure.attr && fieldPathOf(failure.attr)) setFocusAfterSave({ id: controlOf(fieldPathOf(failure.attr)) })
    } finally {
      setBusy(false)
    }
  }

  const keyError = errors.key
  const problems = Object.keys(errors).length
  return html`<form onSubmit=${save} novalidate>
    <div class="editor-grid">
      <div>
        <section aria-labelledby="basics-heading">
          <h2 id="basics-heading">Flag</h2>
          <div class="field">
            <label for="flag-key">Flag key</label>
            <input id="flag-key" value=${flag.key} required autocomplete="off" ...${invalid('flag-key', keyError)}
              onInput=${(e) => change({ ...flag, key: e.currentTarget.value })} />
            <${FieldError} id="flag-key" message=${keyError} />
          </div>
          <div class="field">
            <label for="flag-name">Flag name</label>
            <input id="flag-name" value=${flag.name ?? ''} ...${invalid('flag-name', errors.name)}
              onInput=${(e) => change({ ...flag, name: e.currentTarget.value })} />
            <${FieldError} id="flag-name" message=${errors.name} />
          </div>
          <div class="field">
            <input id="flag-active" type="checkbox" checked=${flag.active}
              onChange=${(e) => change({ ...flag, active: e.currentTarget.checked })} />
            <label for="flag-active" class="inline">Active (served to SDKs)</label>
          </div>
          <div class="field">
            <input id="flag-continuity" type="checkbox" checked=${flag.ensure_experience_continuity ?? false}
              onChange=${(e) => change({ ...flag, ensure_experience_continuity: e.currentTarget.checked })} />
            <label for="flag-continuity" class="inline">Keep the value when an anonymous user signs in (experience continuity)</label>
          </div>
          <div class="field">
            <label for="flag-aggregation">Roll out by</label>
            <select id="flag-aggregation" value=${String(flag.filters.aggregation_group_type_index ?? '')}
              onChange=${(e) => setFilters({ aggregation_group_type_index: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })}>
              <option value="">Users</option>
              ${context.groupTypes.map((g) => html`<option value=${String(g.group_type_index)}>Groups: ${g.group_type}</option>`)}
            </select>
          </div>
        </section>
        <${ConditionSets} groups=${flag.filters.groups ?? []} variants=${variantsOf(flag)} errors=${errors} context=${context}
          onChange=${(groups) => setFilters({ groups })} />
        <${Variants} variants=${variantsOf(flag)} onChange=${setVariants} texts=${texts} onText=${setText} errors=${errors} />
        <${Holdout} holdout=${flag.filters.holdout ?? null} texts=${texts} errors=${errors} onText=${setText}
          onChange=${(holdout, movedTexts) => {
            setFilters({ holdout })
            if (movedTexts) setTexts(movedTexts)
          }} />
      </div>
      <${JsonView} flag=${flag} texts=${texts} onParsed=${fromJson} />
    </div>
    ${
      apiError &&
      html`<p class="error" role="alert">
      Not saved: ${apiError.message}${apiError.attr && !apiField ? ` (at ${apiError.attr})` : ''}
    </p>`
    }
    ${problems > 0 && !apiError && html`<p class="error">${problems} field${problems === 1 ? ' needs' : 's need'} attention before saving.</p>`}
    <div class="row">
      <button type="submit" disabled=${busy}>${isNew ? 'Create flag' : 'Save flag'}</button>
      ${
        !isNew &&
        html`<a href=${`#/projects/${project.id}/flags/${flag.id}/duplicate`}>Duplicate flag</a>
        <button type="button" class="danger" onClick=${() => setDeleting(true)}>Delete flag</button>`
      }
      <span role="status">${status}</span>
    </div>
    ${deleting && html`<${DeleteDialog} project=${project} flag=${flag} onCancel=${() => setDeleting(false)} />`}
  </form>`
}

function DeleteDialog({ project, flag, onCancel }) {
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const confirm = async () => {
    setBusy(true)
    try {
      await api.deleteFlag(project.id, flag.id)
      navigate(`/projects/${project.id}/flags`)
    } catch (failure) {
      setError(failure.message)
      setBusy(false)
    }
  }
  return html`<${ConfirmDialog} title=${`Delete ${flag.key}?`} confirmLabel="Delete flag" busy=${busy} error=${error}
    message="SDKs get no value for it from the next request on, and flags depending on it see false. Its key becomes free again."
    onConfirm=${confirm} onCancel=${onCancel} />`
}

/** A copy of a stored flag as a new one: same conditions, variants and payloads, another key. */
function duplicateOf(flag) {
  const { id, version, created_at, updated_at, ...rest } = flag
  return { ...rest, key: `${flag.key}-copy`, name: flag.name ? `${flag.name} (copy)` : '' }
}

export function FlagEditorPage({ projectId, flagId, duplicate = false }) {
  // the flag as last saved by the editor, so the history follows its version
  const [saved, setSaved] = useState(null)
  const state = useLoad(async () => {
    const [project, cohorts, groupTypes, flags, flag] = await Promise.all([
      api.project(projectId),
      api.cohorts(projectId),
      api.groupTypes(projectId).catch(() => []),
      api.allFlags(projectId),
      flagId ? api.flag(projectId, flagId) : Promise.resolve(newFlag()),
    ])
    const others = flags.filter((f) => f.id !== flag.id)
    return { project, flag: duplicate ? duplicateOf(flag) : flag, context: { cohorts, groupTypes, flags: others } }
  }, [projectId, flagId, duplicate])
  return html`<${Loading} state=${state}>
    ${({ project, flag, context }) => html`
      <h1 tabindex="-1">${flag.id === undefined ? (duplicate ? `New flag from ${flag.key.replace(/-copy$/, '')}` : 'New flag') : `Flag ${flag.key}`}</h1>
      <${ProjectNav} project=${project} current="flags" />
      <p><a href=${`#/projects/${project.id}/flags`}>Back to the flags</a></p>
      <${Editor} key=${`${flag.id}-${flag.version}`} project=${project} initial=${flag} context=${context} onSaved=${setSaved} />
      ${
        flag.id !== undefined &&
        html`<${FlagHistory} project=${project} flag=${saved?.id === flag.id ? saved : flag}
        onRestored=${() => (setSaved(null), state.reload())} />`
      }
    `}
  <//>`
}
