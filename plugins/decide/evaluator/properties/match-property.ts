import type { Properties, PropertyFilter } from '../types.ts'
import { compareDates } from './dates.ts'
import { exactMatch } from './equality.ts'
import { compareNumbers, inRange } from './numeric.ts'
import { regexSearch, type RegexBudget } from './regex.ts'
import { compareSemver, matchSemverRange } from './semver.ts'
import { containsAnyText, containsText, endsWithText, startsWithText } from './text.ts'
import { toText } from './values.ts'

export interface MatchContext {
  /** A resolved IANA zone (see resolveTimeZone). */
  timeZone: string
  nowMillis: number
  /** The request's remaining time for regular expressions; unbounded when absent. */
  regexBudget?: RegexBudget | null
}

/** The persons-table columns a `person_metadata` filter reads, stored under a prefixed key. */
export const PERSON_METADATA_PREFIX = '__posthog_person_metadata__'

export function lookupKey(filter: PropertyFilter): string {
  return filter.type === 'person_metadata' ? `${PERSON_METADATA_PREFIX}${filter.key}` : filter.key
}

/** Operators true for an absent key: the negative ones (§8). */
export const NEGATIVE_OPERATORS: ReadonlySet<string> = new Set([
  'is_not',
  'not_icontains',
  'not_starts_with',
  'not_ends_with',
  'not_icontains_multi',
  'not_regex',
  'not_between',
])

/**
 * One property filter against one property map, with the server's "full
 * properties" rules: an absent key matches only the negative operators, and
 * any matching error is a non-match. Cohort and flag filters are not handled
 * here (cohorts.ts, dependencies.ts).
 */
export function matchProperty(filter: PropertyFilter, properties: Properties, ctx: MatchContext): boolean {
  const key = lookupKey(filter)
  const present = Object.hasOwn(properties, key) && properties[key] !== undefined
  const operator = filter.operator ?? 'exact'
  if (operator === 'is_set') return present
  if (operator === 'is_not_set') return !present
  const v = filter.value
  // A filter without a value matches nothing, negative operators included.
  if (v === undefined || v === null) return false
  if (!present) return NEGATIVE_OPERATORS.has(operator)
  const x = properties[key]
  switch (operator) {
    case 'exact':
      return exactMatch(v, x)
    case 'is_not':
      return !exactMatch(v, x)
    case 'icontains':
      return containsText(v, x)
    case 'not_icontains':
      return !containsText(v, x)
    case 'starts_with':
      return startsWithText(v, x)
    case 'not_starts_with':
      return !startsWithText(v, x)
    case 'ends_with':
      return endsWithText(v, x)
    case 'not_ends_with':
      return !endsWithText(v, x)
    case 'icontains_multi':
      return containsAnyText(v, x)
    case 'not_icontains_multi':
      return !containsAnyText(v, x)
    case 'regex':
    case 'not_regex': {
      const found = regexSearch(toText(v), toText(x), ctx.regexBudget)
      if (found === null) return false
      return operator === 'regex' ? found : !found
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compareNumbers(operator, v, x)
    case 'between':
    case 'not_between': {
      const within = inRange(v, x)
      if (within === null) return false
      return operator === 'between' ? within : !within
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return compareDates(operator, v, x, ctx.timeZone, ctx.nowMillis)
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return compareSemver(operator, v, x)
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard':
      return matchSemverRange(operator, v, x)
    default:
      // in / not_in belong to cohorts, flag_evaluates_to to dependencies; unknown operators cannot match.
      return false
  }
}
