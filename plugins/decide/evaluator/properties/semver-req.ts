import { comparePrerelease, parseStrictVersion, type Version } from './semver-version.ts'

/**
 * A small `VersionReq` in the `semver` crate's (Cargo's) dialect: comma-joined
 * comparators, a bare version meaning caret, `x`/`X`/`*` wildcards, and the
 * rule that a pre-release only satisfies a requirement naming a pre-release on
 * the same major.minor.patch.
 */

type Op = '=' | '>' | '>=' | '<' | '<=' | '~' | '^' | '*'

interface Comparator {
  op: Op
  major: bigint
  minor: bigint | null
  patch: bigint | null
  pre: string[]
}

const COMPARATOR = /^(>=|<=|=|>|<|~|\^)?\s*([^\s]+)$/
const WILDCARD = /^[xX*]$/

function parseComparator(text: string): Comparator | null | 'star' {
  const m = COMPARATOR.exec(text.trim())
  if (!m) return null
  const [core, build] = m[2].split('+', 2)
  if (build !== undefined && !/^[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*$/.test(build)) return null
  const dash = core.indexOf('-')
  const numbers = (dash < 0 ? core : core.slice(0, dash)).split('.')
  const preText = dash < 0 ? null : core.slice(dash + 1)
  if (numbers.length > 3) return null
  const parts: (bigint | null)[] = []
  let sawWildcard = false
  for (const part of numbers) {
    if (WILDCARD.test(part)) {
      sawWildcard = true
      parts.push(null)
    } else if (!sawWildcard && /^(?:0|[1-9]\d*)$/.test(part)) {
      parts.push(BigInt(part))
    } else {
      return null
    }
  }
  if (parts[0] === null) return m[1] === undefined && numbers.length >= 1 ? 'star' : null
  let pre: string[] = []
  if (preText !== null) {
    if (parts.length < 3 || parts[2] === null) return null
    const parsed = parseStrictVersion(`0.0.0-${preText}`)
    if (!parsed) return null
    pre = parsed.pre
  }
  const op: Op = (m[1] as Op | undefined) ?? (sawWildcard ? '*' : '^')
  return { op, major: parts[0], minor: parts[1] ?? null, patch: parts[2] ?? null, pre }
}

export interface VersionReq {
  comparators: Comparator[]
}

export function parseVersionReq(text: string): VersionReq | null {
  const comparators: Comparator[] = []
  const pieces = text.split(',')
  for (const piece of pieces) {
    const comparator = parseComparator(piece)
    if (comparator === null) return null
    if (comparator === 'star') {
      if (pieces.length > 1) return null
      continue
    }
    comparators.push(comparator)
  }
  return { comparators }
}

function matchesExact(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return false
  if (c.minor === null) return true
  if (v.minor !== c.minor) return false
  if (c.patch === null) return true
  return v.patch === c.patch && comparePrerelease(v.pre, c.pre) === 0
}

function matchesGreater(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return v.major > c.major
  if (c.minor === null) return false
  if (v.minor !== c.minor) return v.minor > c.minor
  if (c.patch === null) return false
  if (v.patch !== c.patch) return v.patch > c.patch
  return comparePrerelease(v.pre, c.pre) > 0
}

function matchesLess(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return v.major < c.major
  if (c.minor === null) return false
  if (v.minor !== c.minor) return v.minor < c.minor
  if (c.patch === null) return false
  if (v.patch !== c.patch) return v.patch < c.patch
  return comparePrerelease(v.pre, c.pre) < 0
}

function matchesTilde(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return false
  if (c.minor !== null && v.minor !== c.minor) return false
  if (c.patch !== null && v.patch !== c.patch) return v.patch > c.patch
  return comparePrerelease(v.pre, c.pre) >= 0
}

function matchesCaret(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return false
  if (c.minor === null) return true
  if (c.patch === null) return c.major > 0n ? v.minor >= c.minor : v.minor === c.minor
  if (c.major > 0n) {
    if (v.minor !== c.minor) return v.minor > c.minor
    if (v.patch !== c.patch) return v.patch > c.patch
  } else if (c.minor > 0n) {
    if (v.minor !== c.minor) return false
    if (v.patch !== c.patch) return v.patch > c.patch
  } else if (v.minor !== c.minor || v.patch !== c.patch) {
    return false
  }
  return comparePrerelease(v.pre, c.pre) >= 0
}

function matchesComparator(c: Comparator, v: Version): boolean {
  switch (c.op) {
    case '=':
    case '*':
      return matchesExact(c, v)
    case '>':
      return matchesGreater(c, v)
    case '>=':
      return matchesExact(c, v) || matchesGreater(c, v)
    case '<':
      return matchesLess(c, v)
    case '<=':
      return matchesExact(c, v) || matchesLess(c, v)
    case '~':
      return matchesTilde(c, v)
    case '^':
      return matchesCaret(c, v)
  }
}

export function versionReqMatches(req: VersionReq, version: Version): boolean {
  if (!req.comparators.every((c) => matchesComparator(c, version))) return false
  if (version.pre.length === 0) return true
  return req.comparators.some(
    (c) => c.major === version.major && c.minor === version.minor && c.patch === version.patch && c.pre.length > 0,
  )
}
