/**
 * Versions parsed and ordered as Rust's `semver` crate does, after the
 * server's canonicalisation (strip a leading `v`, drop leading zeros in the
 * numeric core, pad to three parts). Unlike the SemVer spec, the crate's
 * total order also compares build metadata, so `1.0.0+a` ≠ `1.0.0`.
 */

export interface Version {
  major: bigint
  minor: bigint
  patch: bigint
  pre: string[]
  build: string[]
}

const NUMERIC = /^(?:0|[1-9]\d*)$/
const IDENTIFIER = /^[0-9A-Za-z-]+$/
const U64_MAX = 18446744073709551615n

/** `normalize_version_string`: the `v` is stripped before trimming, so " v1" stays invalid. */
export function normalizeVersionText(text: string): string {
  return (text.startsWith('v') ? text.slice(1) : text).trim()
}

export function stripLeadingZeros(part: string): string {
  if (part === '' || !/^\d+$/.test(part)) return part
  return part.replace(/^0+/, '') || '0'
}

/** `canonicalize_version_string`: only the numeric core changes; any -pre/+build suffix is kept. */
export function canonicalizeVersionText(text: string): string {
  const cut = text.search(/[-+]/)
  const core = cut < 0 ? text : text.slice(0, cut)
  const suffix = cut < 0 ? '' : text.slice(cut)
  const parts = core.split('.').map(stripLeadingZeros)
  while (parts.length < 3) parts.push('0')
  return parts.join('.') + suffix
}

function parseNumber(part: string): bigint | null {
  if (!NUMERIC.test(part)) return null
  const value = BigInt(part)
  return value > U64_MAX ? null : value
}

function parseIdentifiers(text: string, allowLeadingZeros: boolean): string[] | null {
  const identifiers = text.split('.')
  for (const id of identifiers) {
    if (!IDENTIFIER.test(id)) return null
    if (!allowLeadingZeros && /^\d+$/.test(id) && !NUMERIC.test(id)) return null
  }
  return identifiers
}

/** Strict `Version::parse`: exactly three numeric parts, no whitespace. */
export function parseStrictVersion(text: string): Version | null {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([^+]*))?(?:\+(.*))?$/.exec(text)
  if (!m) return null
  const major = parseNumber(m[1])
  const minor = parseNumber(m[2])
  const patch = parseNumber(m[3])
  if (major === null || minor === null || patch === null) return null
  const pre = m[4] === undefined ? [] : parseIdentifiers(m[4], false)
  const build = m[5] === undefined ? [] : parseIdentifiers(m[5], true)
  if (pre === null || build === null) return null
  return { major, minor, patch, pre, build }
}

/** `to_semver_representation` applied to text. */
export function parseVersion(text: string): Version | null {
  return parseStrictVersion(canonicalizeVersionText(normalizeVersionText(text)))
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function compareIdentifier(a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a)
  const bNumeric = /^\d+$/.test(b)
  if (aNumeric && bNumeric) return compareBig(BigInt(a), BigInt(b)) || a.length - b.length
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1
  return a < b ? -1 : a > b ? 1 : 0
}

function compareIdentifierLists(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareIdentifier(a[i], b[i])
    if (order !== 0) return Math.sign(order)
  }
  return Math.sign(a.length - b.length)
}

/** A release sorts above its pre-releases. */
export function comparePrerelease(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length)
  return compareIdentifierLists(a, b)
}

export function compareVersions(a: Version, b: Version): number {
  return (
    compareBig(a.major, b.major) ||
    compareBig(a.minor, b.minor) ||
    compareBig(a.patch, b.patch) ||
    comparePrerelease(a.pre, b.pre) ||
    compareIdentifierLists(a.build, b.build)
  )
}
