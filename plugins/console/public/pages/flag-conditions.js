// The condition sets of a flag: each a list of property filters (person, group, cohort or another
// flag, with only the operators valid for that type), a rollout percentage and an optional variant.
import { FieldError, invalid } from '../common.js'
import {
  FILTER_TYPES,
  LIST_OPERATORS,
  VALUELESS_OPERATORS,
  newCondition,
  newFilter,
  operatorsFor,
  withOperator,
} from '../flag-model.js'
import { html } from '../html.js'

function ValueInput({ id, filter, onChange, error, context }) {
  if (filter.type === 'cohort')
    return html`<div class="field">
      <label for=${id}>Cohort</label>
      <select id=${id} value=${String(filter.value ?? '')} onChange=${(e) => onChange({ ...filter, value: Number(e.currentTarget.value) || '' })}
        ...${invalid(id, error)}>
        <option value="">Pick a cohort</option>
        ${context.cohorts.map((c) => html`<option value=${String(c.id)}>${c.name || `Cohort ${c.id}`}</option>`)}
      </select>
      <${FieldError} id=${id} message=${error} />
    </div>`
  if (filter.type === 'flag') {
    const target = context.flags.find((f) => String(f.id) === String(filter.key))
    const variants = target?.filters?.multivariate?.variants ?? []
    return html`<div class="field">
      <label for=${id}>Value</label>
      <select id=${id} value=${String(filter.value)} onChange=${(e) => {
        const v = e.currentTarget.value
        onChange({ ...filter, value: v === 'true' ? true : v === 'false' ? false : v })
      }}>
        <option value="true">true (any value but false)</option>
        <option value="false">false</option>
        ${variants.map((v) => html`<option value=${v.key}>variant ${v.key}</option>`)}
      </select>
    </div>`
  }
  if (VALUELESS_OPERATORS.has(filter.operator)) return null
  if (LIST_OPERATORS.has(filter.operator))
    return html`<div class="field">
      <label for=${id}>Values, one per line</label>
      <textarea id=${id} rows="2" value=${(filter.value ?? []).join('\n')} ...${invalid(id, error)}
        onInput=${(e) => onChange({ ...filter, value: e.currentTarget.value.split('\n').filter((line, i, all) => line !== '' || i < all.length - 1) })}></textarea>
      <${FieldError} id=${id} message=${error} />
    </div>`
  return html`<div class="field">
    <label for=${id}>Value</label>
    <input id=${id} value=${String(filter.value ?? '')} ...${invalid(id, error)}
      onInput=${(e) => onChange({ ...filter, value: e.currentTarget.value })} />
    <${FieldError} id=${id} message=${error} />
  </div>`
}

export function FilterRow({ id, path, number, filter, onChange, onRemove, errors, context, types = FILTER_TYPES }) {
  const keyError = errors[`${path}.key`]
  const operators = operatorsFor(filter.type)
  const setType = (type) => onChange(newFilter(type))
  return html`<fieldset class="filter-row">
    <legend>Filter ${number}</legend>
    <div class="field">
      <label for=${`${id}-type`}>Filter type</label>
      <select id=${`${id}-type`} value=${filter.type ?? 'person'} onChange=${(e) => setType(e.currentTarget.value)}>
        ${types.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select>
    </div>
    ${
      filter.type === 'group' &&
      html`<div class="field">
      <label for=${`${id}-group-type`}>Group type</label>
      <select id=${`${id}-group-type`} value=${String(filter.group_type_index ?? 0)}
        onChange=${(e) => onChange({ ...filter, group_type_index: Number(e.currentTarget.value) })}>
        ${context.groupTypes.length === 0 && html`<option value="0">index 0 (no group type captured yet)</option>`}
        ${context.groupTypes.map((g) => html`<option value=${String(g.group_type_index)}>${g.group_type}</option>`)}
      </select>
    </div>`
    }
    ${
      (filter.type === 'person' || filter.type === 'group' || !filter.type) &&
      html`<div class="field">
      <label for=${`${id}-key`}>Property</label>
      <input id=${`${id}-key`} value=${filter.key} ...${invalid(`${id}-key`, keyError)}
        onInput=${(e) => onChange({ ...filter, key: e.currentTarget.value })} />
      <${FieldError} id=${`${id}-key`} message=${keyError} />
    </div>`
    }
    ${
      filter.type === 'flag' &&
      html`<div class="field">
      <label for=${`${id}-key`}>Flag</label>
      <select id=${`${id}-key`} value=${String(filter.key)} ...${invalid(`${id}-key`, keyError)}
        onChange=${(e) => onChange({ ...filter, key: e.currentTarget.value, value: true })}>
        <option value="">Pick a flag</option>
        ${context.flags.map((f) => html`<option value=${String(f.id)}>${f.key}</option>`)}
      </select>
      <${FieldError} id=${`${id}-key`} message=${keyError} />
    </div>`
    }
    <div class="field">
      <label for=${`${id}-operator`}>Operator</label>
      <select id=${`${id}-operator`} value=${filter.operator} onChange=${(e) => onChange(withOperator(filter, e.currentTarget.value))}>
        ${operators.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select>
    </div>
    <${ValueInput} id=${`${id}-value`} filter=${filter} onChange=${onChange} error=${errors[`${path}.value`]} context=${context} />
    <button type="button" onClick=${onRemove}>Remove filter ${number}</button>
  </fieldset>`
}

function ConditionSet({ index, count, condition, variants, onChange, onRemove, onMove, errors, context }) {
  const id = `c${index}`
  const path = `filters.groups.${index}`
  const filters = condition.properties ?? []
  const setFilter = (j, filter) => onChange({ ...condition, properties: filters.map((f, k) => (k === j ? filter : f)) })
  const rolloutError = errors[`${path}.rollout_percentage`]
  return html`<fieldset>
    <legend>Condition set ${index + 1}</legend>
    ${filters.length === 0 && html`<p class="hint">No filter: every user is in this set.</p>`}
    ${filters.map(
      (filter, j) => html`<${FilterRow} id=${`${id}-f${j}`} path=${`${path}.properties.${j}`} number=${j + 1}
        filter=${filter} errors=${errors} context=${context}
        onChange=${(f) => setFilter(j, f)}
        onRemove=${() => onChange({ ...condition, properties: filters.filter((_, k) => k !== j) })} />`,
    )}
    <div class="row">
      <button type="button" onClick=${() => onChange({ ...condition, properties: [...filters, newFilter()] })}>
        Add filter to condition set ${index + 1}
      </button>
    </div>
    <div class="row">
      <div class="field">
        <label for=${`${id}-rollout`}>Rollout percentage</label>
        <input id=${`${id}-rollout`} type="number" min="0" max="100" step="any" ...${invalid(`${id}-rollout`, rolloutError)}
          value=${condition.rollout_percentage ?? 100}
          onInput=${(e) => onChange({ ...condition, rollout_percentage: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })} />
        <${FieldError} id=${`${id}-rollout`} message=${rolloutError} />
      </div>
      ${
        variants.length > 0 &&
        html`<div class="field">
        <label for=${`${id}-variant`}>Variant for this set</label>
        <select id=${`${id}-variant`} value=${condition.variant ?? ''}
          onChange=${(e) => onChange({ ...condition, variant: e.currentTarget.value || null })}>
          <option value="">By the variant weights</option>
          ${variants.map((v) => html`<option value=${v.key}>${v.key}</option>`)}
        </select>
      </div>`
      }
      <button type="button" disabled=${index === 0} onClick=${() => onMove(-1)}>Move condition set ${index + 1} up</button>
      <button type="button" disabled=${index === count - 1} onClick=${() => onMove(1)}>
        Move condition set ${index + 1} down
      </button>
      <button type="button" class="danger" onClick=${onRemove}>Remove condition set ${index + 1}</button>
    </div>
  </fieldset>`
}

export function ConditionSets({ groups, variants, onChange, errors, context }) {
  const set = (i, condition) => onChange(groups.map((g, k) => (k === i ? condition : g)))
  const move = (i, by) => {
    const next = [...groups]
    ;[next[i], next[i + by]] = [next[i + by], next[i]]
    onChange(next)
  }
  return html`<section aria-labelledby="conditions-heading">
    <h2 id="conditions-heading">Release conditions</h2>
    <p class="hint">A user gets the flag from the first condition set whose filters all match, if they fall within its rollout.</p>
    ${groups.map(
      (condition, i) => html`<${ConditionSet} index=${i} count=${groups.length} condition=${condition}
        variants=${variants} errors=${errors} context=${context}
        onChange=${(c) => set(i, c)} onRemove=${() => onChange(groups.filter((_, k) => k !== i))}
        onMove=${(by) => move(i, by)} />`,
    )}
    <button type="button" onClick=${() => onChange([...groups, newCondition()])}>Add condition set</button>
  </section>`
}
