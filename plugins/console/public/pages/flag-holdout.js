// A flag's holdout (PostHog's `filters.holdout = {id, exclusion_percentage}`): none, or an id and
// the share of users held out, who get the variant `holdout-<id>` (and its payload) before any
// condition set is looked at. Errors, the editor's own and the API's, show next to each field.
import { FieldError, invalid } from '../common.js'
import { holdoutVariant } from '../flag-model.js'
import { html } from '../html.js'
import { PayloadInput } from './flag-variants.js'

/** What a number input holds: a number, or null while it is empty or not a number. */
const numberOf = (text) => (text.trim() === '' || !Number.isFinite(Number(text)) ? null : Number(text))

export function Holdout({ holdout, texts, errors, onText, onChange }) {
  /** The holdout changed; a payload typed for the old id moves with it to the new variant name. */
  const set = (next) => {
    if (!holdout || !next || holdoutVariant(holdout) === holdoutVariant(next)) return onChange(next)
    const moved = { ...texts }
    if (Object.hasOwn(moved, holdoutVariant(holdout))) {
      moved[holdoutVariant(next)] = moved[holdoutVariant(holdout)]
      delete moved[holdoutVariant(holdout)]
    }
    onChange(next, moved)
  }
  const idError = errors['filters.holdout.id']
  const shareError = errors['filters.holdout.exclusion_percentage']
  return html`<section aria-labelledby="holdout-heading">
    <h2 id="holdout-heading">Holdout</h2>
    <p class="hint">Users in the holdout get the variant <code>holdout-<var>id</var></code> and none of the condition
      sets: a baseline kept out of the experiment. The same users are held out of every flag with the same holdout id.</p>
    <div class="field">
      <input id="flag-holdout" type="checkbox" checked=${Boolean(holdout)}
        onChange=${(e) => set(e.currentTarget.checked ? { id: null, exclusion_percentage: 10 } : null)} />
      <label for="flag-holdout" class="inline">Hold out a share of users</label>
    </div>
    ${
      holdout &&
      html`<div class="row">
        <div class="field">
          <label for="holdout-id">Holdout id</label>
          <input id="holdout-id" type="number" step="1" value=${holdout.id ?? ''} ...${invalid('holdout-id', idError)}
            onInput=${(e) => set({ ...holdout, id: numberOf(e.currentTarget.value) })} />
          <${FieldError} id="holdout-id" message=${idError} />
        </div>
        <div class="field">
          <label for="holdout-exclusion">Users held out (%)</label>
          <input id="holdout-exclusion" type="number" min="0" max="100" step="any" value=${holdout.exclusion_percentage ?? ''}
            ...${invalid('holdout-exclusion', shareError)}
            onInput=${(e) => set({ ...holdout, exclusion_percentage: numberOf(e.currentTarget.value) })} />
          <${FieldError} id="holdout-exclusion" message=${shareError} />
        </div>
      </div>
      ${
        Number.isInteger(holdout.id) &&
        html`<${PayloadInput} id="holdout-payload" name=${holdoutVariant(holdout)}
          label=${`Payload of ${holdoutVariant(holdout)}, for held-out users (JSON, optional)`}
          texts=${texts} onText=${onText} errors=${errors} />`
      }`
    }
  </section>`
}
