// What the flag editor edits: PostHog's flag JSON (`filters.groups`, `multivariate`, `payloads`),
// the operators each kind of property filter allows, and the checks made before saving.

/** Operators by filter type, with the words the editor shows. Only these are offered for the type. */
export const OPERATORS = {
  property: [
    ['exact', 'equals one of'],
    ['is_not', 'equals none of'],
    ['icontains', 'contains'],
    ['not_icontains', 'does not contain'],
    ['starts_with', 'starts with'],
    ['ends_with', 'ends with'],
    ['regex', 'matches regex'],
    ['not_regex', 'does not match regex'],
    ['gt', 'greater than'],
    ['gte', 'greater than or equal to'],
    ['lt', 'less than'],
    ['lte', 'less than or equal to'],
    ['is_set', 'is set'],
    ['is_not_set', 'is not set'],
    ['is_date_before', 'date before'],
    ['is_date_after', 'date after'],
    ['is_date_exact', 'date is'],
    ['semver_eq', 'version equals'],
    ['semver_gt', 'version greater than'],
    ['semver_gte', 'version at least'],
    ['semver_lt', 'version less than'],
    ['semver_lte', 'version at most'],
  ],
  cohort: [
    ['in', 'is in the cohort'],
    ['not_in', 'is not in the cohort'],
  ],
  flag: [['flag_evaluates_to', 'evaluates to']],
}

export const FILTER_TYPES = [
  ['person', 'Person property'],
  ['group', 'Group property'],
  ['cohort', 'Cohort'],
  ['flag', 'Another flag'],
]

export const operatorsFor = (type) => OPERATORS[type === 'person' || type === 'group' ? 'property' : type]
/** Operators whose value is a list (one per line in the editor). */
export const LIST_OPERATORS = new Set(['exact', 'is_not'])
/** Operators that take no value (PostHog stores the operator's name as the value). */
export const VALUELESS_OPERATORS = new Set(['is_set', 'is_not_set'])

export function newFilter(type = 'person') {
  if (type === 'cohort') return { type, key: 'id', operator: 'in', value: '' }
  if (type === 'flag') return { type, key: '', operator: 'flag_evaluates_to', value: true }
  return { type, key: '', operator: 'exact', value: [], ...(type === 'group' ? { group_type_index: 0 } : {}) }
}

/** The filter with another operator, its value reshaped to what the operator takes. */
export function withOperator(filter, operator) {
  let value = filter.value
  if (VALUELESS_OPERATORS.has(operator)) value = operator
  else if (LIST_OPERATORS.has(operator))
    value = Array.isArray(value) ? value : value && !VALUELESS_OPERATORS.has(value) ? [String(value)] : []
  else if (Array.isArray(value)) value = value[0] ?? ''
  else if (VALUELESS_OPERATORS.has(value)) value = ''
  return { ...filter, operator, value }
}

export const newCondition = () => ({ properties: [], rollout_percentage: 100, variant: null })

/** The editor's starting point for a new flag: one condition set, everyone, on. */
export function newFlag() {
  return {
    key: '',
    name: '',
    active: true,
    ensure_experience_continuity: false,
    filters: { groups: [newCondition()], payloads: {} },
  }
}

/** Only the fields the API takes, so the JSON view shows exactly what is sent. */
export function flagBody(flag) {
  const body = {
    key: flag.key,
    name: flag.name ?? '',
    active: flag.active,
    ensure_experience_continuity: flag.ensure_experience_continuity ?? false,
    filters: flag.filters,
  }
  if (flag.version !== undefined) body.version = flag.version
  return body
}

export const variantsOf = (flag) => flag.filters.multivariate?.variants ?? []

/** "30% of users matching 1 filter; variants control 50 / test 50", with "10% held out (holdout 7)" first for a holdout. */
export function rolloutSummary(flag) {
  const holdout = flag.filters?.holdout
  const held = holdout ? [`${holdout.exclusion_percentage}% held out (holdout ${holdout.id})`] : []
  const groups = flag.filters?.groups ?? []
  if (groups.length === 0)
    return [...held, `no condition set: off for everyone${held.length ? ' else' : ''}`].join('; ')
  const parts = groups.map((group) => {
    const n = (group.properties ?? []).length
    const who = n === 0 ? 'everyone' : `users matching ${n} filter${n === 1 ? '' : 's'}`
    return `${group.rollout_percentage ?? 100}% of ${who}`
  })
  const variants = variantsOf(flag)
  if (variants.length > 0) parts.push(`variants ${variants.map((v) => `${v.key} ${v.rollout_percentage}`).join(' / ')}`)
  return [...held, ...parts].join('; ')
}

/** Problems the editor finds before asking the API, by the API's own `attr` path. */
export function localErrors(flag, payloadTexts) {
  const errors = {}
  if (!/^[a-zA-Z0-9_-]+$/.test(flag.key)) errors.key = 'Use letters, digits, - and _ only.'
  const variants = variantsOf(flag)
  if (variants.length > 0) {
    const total = variants.reduce((sum, v) => sum + (Number(v.rollout_percentage) || 0), 0)
    if (Math.abs(total - 100) > 1e-9)
      errors['filters.multivariate'] = `Variant weights must sum to 100 (now ${Number(total.toFixed(4))}).`
    const seen = new Set()
    variants.forEach((v, i) => {
      if (!v.key) errors[`filters.multivariate.variants.${i}.key`] = 'A variant needs a key.'
      else if (seen.has(v.key)) errors[`filters.multivariate.variants.${i}.key`] = 'Two variants have this key.'
      seen.add(v.key)
    })
  }
  Object.assign(errors, holdoutErrors(flag.filters.holdout))
  for (const [name, text] of Object.entries(payloadTexts)) {
    if (text.trim() === '') continue
    try {
      JSON.parse(text)
    } catch (error) {
      errors[`filters.payloads.${name}`] = `Not valid JSON: ${error.message}`
    }
  }
  ;(flag.filters.groups ?? []).forEach((group, i) => {
    const r = group.rollout_percentage
    if (r !== null && (!(r >= 0) || r > 100)) errors[`filters.groups.${i}.rollout_percentage`] = 'Between 0 and 100.'
    ;(group.properties ?? []).forEach((filter, j) => {
      if (filter.type !== 'cohort' && !filter.key)
        errors[`filters.groups.${i}.properties.${j}.key`] =
          filter.type === 'flag' ? 'Pick a flag.' : 'Name the property.'
      if (filter.type === 'cohort' && !filter.value)
        errors[`filters.groups.${i}.properties.${j}.value`] = 'Pick a cohort.'
    })
  })
  return errors
}

/**
 * A holdout (PostHog's `filters.holdout`): users whose holdout bucket is within
 * `exclusion_percentage` get the variant `holdout-<id>` and no condition set is evaluated. The
 * bucket does not depend on the flag, so flags sharing a holdout id hold out the same users.
 */
export const holdoutVariant = (holdout) => `holdout-${holdout.id}`

function holdoutErrors(holdout) {
  const errors = {}
  if (!holdout) return errors
  if (!Number.isInteger(holdout.id)) errors['filters.holdout.id'] = 'Give the holdout a whole number as its id.'
  const share = holdout.exclusion_percentage
  if (typeof share !== 'number' || !(share >= 0 && share <= 100))
    errors['filters.holdout.exclusion_percentage'] = 'Between 0 and 100.'
  return errors
}

/** The id of the control showing `attr`'s error, for moving the focus there. */
export function controlOf(attr) {
  const found =
    /^filters\.groups\.(\d+)\.properties\.(\d+)\.(key|value)/.exec(attr) ??
    /^filters\.groups\.(\d+)\.(rollout_percentage)/.exec(attr) ??
    /^filters\.multivariate\.variants\.(\d+)\.(key|rollout_percentage)/.exec(attr)
  if (attr === 'key' || attr === 'name') return `flag-${attr}`
  if (attr.startsWith('filters.holdout'))
    return attr.endsWith('exclusion_percentage') ? 'holdout-exclusion' : 'holdout-id'
  if (!found) return null
  if (attr.startsWith('filters.multivariate')) return `v${found[1]}-${found[2] === 'key' ? 'key' : 'weight'}`
  if (found[2] === 'rollout_percentage') return `c${found[1]}-rollout`
  return `c${found[1]}-f${found[2]}-${found[3]}`
}

/**
 * The error path of the field that shows the API's `attr` (the API may name a deeper path, such as
 * one item of a list of values), or null when no field of the form shows it.
 */
export function fieldPathOf(attr) {
  if (attr === 'key' || attr === 'name' || attr === 'filters.multivariate') return attr
  const found =
    /^filters\.groups\.\d+\.properties\.\d+\.(key|value)/.exec(attr) ??
    /^filters\.groups\.\d+\.rollout_percentage/.exec(attr) ??
    /^filters\.multivariate\.variants\.\d+\.(key|rollout_percentage)/.exec(attr) ??
    /^filters\.holdout\.(id|exclusion_percentage)/.exec(attr) ??
    /^filters\.payloads\.[^.]+$/.exec(attr)
  // the holdout as a whole (its shape): shown at its id
  if (!found && attr === 'filters.holdout') return 'filters.holdout.id'
  return found ? found[0] : null
}

/** Payload texts (what the operator types) from the stored payloads, which are JSON strings. */
export function payloadTextsOf(flag) {
  const texts = {}
  for (const [name, payload] of Object.entries(flag.filters.payloads ?? {}))
    texts[name] = typeof payload === 'string' ? payload : JSON.stringify(payload)
  return texts
}

/** The flag with its payloads taken from the texts: the ones that parse, compacted; empty ones left out. */
export function withPayloads(flag, texts) {
  const names = variantsOf(flag).length > 0 ? variantsOf(flag).map((v) => v.key) : ['true']
  if (flag.filters.holdout) names.push(holdoutVariant(flag.filters.holdout))
  const payloads = {}
  for (const name of names) {
    const text = texts[name]?.trim()
    if (!text) continue
    try {
      payloads[name] = JSON.stringify(JSON.parse(text))
    } catch {
      payloads[name] = text
    }
  }
  return { ...flag, filters: { ...flag.filters, payloads } }
}

/** The flags with a filter of type `cohort` naming cohort `cohortId` in any condition set. */
export function flagsUsingCohort(flags, cohortId) {
  const uses = (filter) => filter.type === 'cohort' && String(filter.value) === String(cohortId)
  return flags.filter((flag) => (flag.filters?.groups ?? []).some((group) => (group.properties ?? []).some(uses)))
}
