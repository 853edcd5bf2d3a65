import { parseVersionReq, versionReqMatches } from './semver-req.ts';
import { canonicalizeVersionText, compareVersions, normalizeVersionText, parseVersion, stripLeadingZeros } from './semver-version.ts';
import { toText } from './values.ts';

export type SemverCompareOperator = 'semver_eq' | 'semver_neq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte';
export type SemverRangeOperator = 'semver_tilde' | 'semver_caret' | 'semver_wildcard';

/** An unparseable property value is a non-match; an unparseable filter value is an error (also a non-match). */
export function compareSemver(operator: SemverCompareOperator, filterValue: unknown, propertyValue: unknown): boolean {
  const x = parseVersion(toText(propertyValue));
  const v = parseVersion(toText(filterValue));
  if (x === null || v === null) return false;
  const order = compareVersions(x, v);
  switch (operator) {
    case 'semver_eq':
      return order === 0;
    case 'semver_neq':
      return order !== 0;
    case 'semver_gt':
      return order > 0;
    case 'semver_gte':
      return order >= 0;
    case 'semver_lt':
      return order < 0;
    case 'semver_lte':
      return order <= 0;
  }
}

function requirementText(operator: SemverRangeOperator, filterValue: unknown): string {
  const normalized = normalizeVersionText(toText(filterValue));
  if (operator === 'semver_tilde') return `~${canonicalizeVersionText(normalized)}`;
  if (operator === 'semver_caret') return `^${canonicalizeVersionText(normalized)}`;
  // Wildcards keep their length (the `*` supplies the rest) but lose leading zeros, and `*` becomes `x`.
  return normalized.split('.').map(stripLeadingZeros).join('.').replaceAll('*', 'x');
}

/** `~1.2.3` ≥1.2.3 <1.3.0; `^1.2.3` ≥1.2.3 <2.0.0 (narrower below 1.0); `1.2.*` ≥1.2.0 <1.3.0. */
export function matchSemverRange(operator: SemverRangeOperator, filterValue: unknown, propertyValue: unknown): boolean {
  const version = parseVersion(toText(propertyValue));
  if (version === null) return false;
  const requirement = parseVersionReq(requirementText(operator, filterValue));
  return requirement !== null && versionReqMatches(requirement, version);
}
