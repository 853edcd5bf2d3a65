// Variants of a multivariate flag (key, name, weight, payload), or the payload of a boolean flag.
// Weights must sum to 100 and payloads must be JSON: both are checked as the operator types.
import { FieldError, invalid } from '../common.js'
import { html } from '../html.js'

export function PayloadInput({ id, name, label, texts, onText, errors }) {
  const error = errors[`filters.payloads.${name}`]
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <textarea id=${id} rows="2" value=${texts[name] ?? ''} placeholder='{"any": "JSON"}' ...${invalid(id, error)}
      onInput=${(e) => onText(name, e.currentTarget.value)}></textarea>
    <${FieldError} id=${id} message=${error} />
  </div>`
}

export function Variants({ variants, onChange, texts, onText, errors }) {
  const set = (i, variant) => onChange(variants.map((v, k) => (k === i ? variant : v)))
  const total = variants.reduce((sum, v) => sum + (Number(v.rollout_percentage) || 0), 0)
  const sumError = errors['filters.multivariate']
  if (variants.length === 0)
    return html`<section aria-labelledby="variants-heading">
      <h2 id="variants-heading">Value and payload</h2>
      <p>A boolean flag: matching users get <code>true</code>.</p>
      <${PayloadInput} id="payload-true" name="true" label="Payload when true (JSON, optional)"
        texts=${texts} onText=${onText} errors=${errors} />
      <button type="button" onClick=${() =>
        onChange([
          { key: 'control', name: '', rollout_percentage: 50 },
          { key: 'test', name: '', rollout_percentage: 50 },
        ])}>Make it multivariate</button>
    </section>`
  return html`<section aria-labelledby="variants-heading">
    <h2 id="variants-heading">Variants</h2>
    ${variants.map((variant, i) => {
      const keyError = errors[`filters.multivariate.variants.${i}.key`]
      const weightError = errors[`filters.multivariate.variants.${i}.rollout_percentage`]
      return html`<fieldset>
        <legend>Variant ${i + 1}</legend>
        <div class="row">
          <div class="field">
            <label for=${`v${i}-key`}>Variant key</label>
            <input id=${`v${i}-key`} value=${variant.key} ...${invalid(`v${i}-key`, keyError)}
              onInput=${(e) => set(i, { ...variant, key: e.currentTarget.value })} />
            <${FieldError} id=${`v${i}-key`} message=${keyError} />
          </div>
          <div class="field">
            <label for=${`v${i}-name`}>Variant name</label>
            <input id=${`v${i}-name`} value=${variant.name ?? ''} onInput=${(e) => set(i, { ...variant, name: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for=${`v${i}-weight`}>Weight (%)</label>
            <input id=${`v${i}-weight`} type="number" min="0" max="100" step="any" value=${variant.rollout_percentage}
              ...${invalid(`v${i}-weight`, weightError ?? sumError)}
              onInput=${(e) => set(i, { ...variant, rollout_percentage: Number(e.currentTarget.value) })} />
            <${FieldError} id=${`v${i}-weight`} message=${weightError} />
          </div>
        </div>
        <${PayloadInput} id=${`v${i}-payload`} name=${variant.key} label=${`Payload of ${variant.key || `variant ${i + 1}`} (JSON, optional)`}
          texts=${texts} onText=${onText} errors=${errors} />
        <button type="button" onClick=${() => onChange(variants.filter((_, k) => k !== i))}>Remove variant ${i + 1}</button>
      </fieldset>`
    })}
    <p id="weights-total" class=${sumError ? 'error' : 'ok'} aria-live="polite">
      Weights total ${Number(total.toFixed(4))}%${sumError ? ` — ${sumError}` : ''}
    </p>
    <button type="button" onClick=${() => onChange([...variants, { key: `variant-${variants.length + 1}`, name: '', rollout_percentage: 0 }])}>
      Add variant
    </button>
  </section>`
}
