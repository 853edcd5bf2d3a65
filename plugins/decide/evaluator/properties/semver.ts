import { parseVersionReq, versionReqMatches } from './semver-req.ts'
import {
  canonicalizeVersionText,
  compareVersions,
  normalizeVersionText,
  parseVersion,
  stripLeadingZeros,
} from './semver-version.ts'
import type { Version } from './semver-version.ts'
import { TextMemo } from './memo.ts'
import { toText } from './values.ts'

/** Parsed versions and requirements by text (app versions are few; filter values repeat on every request). */
const CACHE_LIMIT = 2000
/** Longer texts are parsed each time rather than remembered. */
const MAX_REMEMBERED_LENGTH = 256
const versions = new TextMemo<Version | null>(CACHE_LIMIT)
const requirements = new TextMemo<ReturnType<typeof parseVersionReq>>(CACHE_LIMIT)

function versionOf(text: string): Version | null {
  let version = versions.get(text)
  if (version === undefined) {
    version = parseVersion(text)
    if (text.length <= MAX_REMEMBERED_LENGTH) versions.remember(text, version)
  }
  return version
}

export type SemverCompareOperator = 'semver_eq' | 'semver_neq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte'
export type SemverRangeOperator = 'semver_tilde' | 'semver_caret' | 'semver_wildcard'

/** An unparseable property value is a non-match; an unparseable filter value is an error (also a non-match). */
export function compareSemver(operator: SemverCompareOperator, filterValue: unknown, propertyValue: unknown): boolean {
  const x = versionOf(toText(propertyValue))
  const v = versionOf(toText(filterValue))
  if (x === null || v === null) return false
  return orderMatches(operator, compareVersions(x, v))
}

function orderMatches(operator: SemverCompareOperator, order: number): boolean {
  switch (operator) {
    case 'semver_eq':
      return order === 0
    case 'semver_neq':
      return order !== 0
    case 'semver_gt':
      return order > 0
    case 'semver_gte':
      return order >= 0
    case 'semver_lt':
      return order < 0
    case 'semver_lte':
      return order <= 0
  }
}

function requirementText(operator: SemverRangeOperator, filterValue: unknown): string {
  const normalized = normalizeVersionText(toText(filterValue))
  if (operator === 'semver_tilde') return `~${canonicalizeVersionText(normalized)}`
  if (operator === 'semver_caret') return `^${canonicalizeVersionText(normalized)}`
  // Wildcards keep their length (the `*` supplies the rest) but lose leading zeros, and `*` becomes `x`.
  return normalized.split('.').map(stripLeadingZeros).join('.').replaceAll('*', 'x')
}

/** `~1.2.3` ≥1.2.3 <1.3.0; `^1.2.3` ≥1.2.3 <2.0.0 (narrower below 1.0); `1.2.*` ≥1.2.0 <1.3.0. */
export function matchSemverRange(operator: SemverRangeOperator, filterValue: unknown, propertyValue: unknown): boolean {
  const version = versionOf(toText(propertyValue))
  if (version === null) return false
  const filterText = toText(filterValue)
  const key = `${operator} ${filterText}`
  let requirement = requirements.get(key)
  if (requirement === undefined) {
    requirement = parseVersionReq(requirementText(operator, filterText))
    if (filterText.length <= MAX_REMEMBERED_LENGTH) requirements.remember(key, requirement)
  }
  return requirement !== null && versionReqMatches(requirement, version)
}

const RANGE_OPERATORS: ReadonlySet<string> = new Set(['semver_tilde', 'semver_caret', 'semver_wildcard'])
const SEMVER_OPERATORS: ReadonlySet<string> = new Set([
  ...RANGE_OPERATORS,
  'semver_eq',
  'semver_neq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
])

export function isSemverOperator(operator: string): operator is SemverCompareOperator | SemverRangeOperator {
  return SEMVER_OPERATORS.has(operator)
}

/**
 * compareSemver and matchSemverRange with the filter's version or range parsed once (compiled
 * filters): null when the filter's side does not parse, so that nothing matches.
 */
export function semverMatcher(
  operator: SemverCompareOperator | SemverRangeOperator,
  filterValue: unknown,
): ((propertyValue: unknown) => boolean) | null {
  if (RANGE_OPERATORS.has(operator)) {
    const requirement = parseVersionReq(requirementText(operator as SemverRangeOperator, toText(filterValue)))
    if (requirement === null) return null
    return (propertyValue) => {
      const version = versionOf(toText(propertyValue))
      return version !== null && versionReqMatches(requirement, version)
    }
  }
  const v = parseVersion(toText(filterValue))
  if (v === null) return null
  return (propertyValue) => {
    const x = versionOf(toText(propertyValue))
    return x !== null && orderMatches(operator as SemverCompareOperator, compareVersions(x, v))
  }
}
