import type { Properties, PropertyFilter } from '../types.ts'
import { dateMatcher, type DateOperator } from './dates.ts'
import { isBooleanish, isTruthy } from './equality.ts'
import { lookupKey, matchProperty, NEGATIVE_OPERATORS, type MatchContext } from './match-property.ts'
import { numberMatcher, type NumericOperator } from './numeric.ts'
import { isSemverOperator, semverMatcher } from './semver.ts'
import { asciiLower, toText } from './values.ts'

/** One property filter, specialised on its operator and value: matchProperty's answer for any properties. */
export interface CompiledProperty {
  readonly matches: (properties: Properties, match: MatchContext) => boolean
  /** What was compiled, for the debug listing (compiled-flag.ts). */
  readonly text: string
}

const hasOwn = Object.prototype.hasOwnProperty
const never = () => false

type PresentMatcher = (x: unknown, match: MatchContext) => boolean

/**
 * The value-dependent part of `exact`, `is_not`, the text, number, date and semver operators, with
 * the filter's side (booleanish, lowercased, listed, parsed) worked out once: equality.ts, text.ts,
 * numeric.ts, dates.ts and semver.ts do the same per call. `never` when the filter's side cannot
 * match anything; null for the operators left to matchProperty.
 */
function presentMatcher(operator: string, v: unknown): PresentMatcher | null {
  switch (operator) {
    case 'exact':
    case 'is_not': {
      let exact: (x: unknown) => boolean
      if (isBooleanish(v)) {
        const truth = isTruthy(v)
        exact = (x) => isTruthy(x) === truth
      } else if (Array.isArray(v)) {
        const texts = new Set(v.map((candidate) => toText(candidate).toLowerCase()))
        exact = (x) => texts.has(toText(x).toLowerCase())
      } else {
        const text = toText(v).toLowerCase()
        exact = (x) => toText(x).toLowerCase() === text
      }
      return operator === 'exact' ? exact : (x) => !exact(x)
    }
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      const needle = asciiLower(toText(v))
      const negated = operator.startsWith('not_')
      if (operator.endsWith('icontains')) return (x) => asciiLower(toText(x)).includes(needle) !== negated
      if (operator.endsWith('starts_with')) return (x) => asciiLower(toText(x)).startsWith(needle) !== negated
      return (x) => asciiLower(toText(x)).endsWith(needle) !== negated
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return numberMatcher(operator as NumericOperator, v) ?? never
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const dates = dateMatcher(operator as DateOperator, v)
      return dates ? (x, match) => dates(x, match.timeZone, match.nowMillis) : never
    }
    default:
      return isSemverOperator(operator) ? (semverMatcher(operator, v) ?? never) : null
  }
}

/**
 * matchProperty for one filter, decided as far as the filter alone decides it: `is_set`, a filter
 * without a value, an absent key and unknown operators need no call; the operators above compare
 * with their value prepared; the others (regex, ranges, lists of texts) call matchProperty itself.
 */
export function compileProperty(filter: PropertyFilter): CompiledProperty {
  const key = lookupKey(filter)
  const operator = filter.operator ?? 'exact'
  const v = filter.value
  const text = `${filter.type ?? 'person'} ${JSON.stringify(key)} ${operator} ${JSON.stringify(v) ?? 'undefined'}`
  const present = (properties: Properties) => hasOwn.call(properties, key) && properties[key] !== undefined
  if (operator === 'is_set') return { matches: present, text }
  if (operator === 'is_not_set') return { matches: (properties) => !present(properties), text }
  if (v === undefined || v === null) return { matches: never, text: `${text} (no value: never)` }
  const absent = NEGATIVE_OPERATORS.has(operator)
  const prepared = presentMatcher(operator, v)
  if (prepared)
    return { matches: (properties, match) => (present(properties) ? prepared(properties[key], match) : absent), text }
  return {
    matches: (properties, match) => (present(properties) ? matchProperty(filter, properties, match) : absent),
    text: `${text} (interpreted)`,
  }
}
