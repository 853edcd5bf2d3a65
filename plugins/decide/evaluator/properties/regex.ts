import vm from 'node:vm'
import { RE2JS } from 're2js'
import { regexBudgetExhausted } from '../errors.ts'
import { TextMemo } from './memo.ts'
import { threadCpuMillis } from './thread-cpu.ts'

/**
 * Operator-written patterns run against user-controlled values, so matching
 * must never stall the event loop. The server uses fancy_regex, which hands
 * ordinary patterns to the linear-time `regex` crate and runs only look-around
 * and back-references on a backtracking VM capped at 10,000 steps. We mirror
 * that split: RE2 syntax (the ancestor of Rust's syntax) in re2js, linear
 * time, for ordinary patterns; V8's backtracking engine under a wall-clock cap
 * for the fancy ones. Hitting the cap is a matching error, like the server's
 * backtrack limit: no match for either `regex` or `not_regex`.
 *
 * A request's matching time is also bounded as a whole (RegexBudget): without it, a flag with
 * hundreds of fancy filters met with crafted values cost the cap hundreds of times over.
 */

/** Comparable to fancy_regex's 10,000 backtracking steps, with headroom for a busy machine. */
export const BACKTRACKING_MATCH_LIMIT_MS = 10
const CACHE_LIMIT = 500

type Compiled = { kind: 'linear'; re: RE2JS } | { kind: 'fancy'; re: RegExp } | { kind: 'invalid' }

const cache = new TextMemo<Compiled>(CACHE_LIMIT)

/** Features the `regex` crate rejects and fancy_regex adds. */
const FANCY_FEATURE = /\(\?<?[=!]|\(\?>|\\[1-9]|\\k<|\\G|[*+?}]\+/

function compileFancy(pattern: string): RegExp | null {
  // Rust inline flags at the very start become JavaScript flags; named groups lose the P.
  let source = pattern.replace(/\(\?P</g, '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>')
  let flags = 'u'
  const leading = /^\(\?([imsx]+)\)/.exec(source)
  if (leading) {
    if (leading[1].includes('x')) return null
    flags += leading[1]
    source = source.slice(leading[0].length)
  }
  source = source.replace(/\\A/g, '^').replace(/\\z/g, '$')
  try {
    return new RegExp(source, flags)
  } catch {
    return null
  }
}

function compile(pattern: string): Compiled {
  try {
    return { kind: 'linear', re: RE2JS.compile(pattern) }
  } catch {
    if (!FANCY_FEATURE.test(pattern)) return { kind: 'invalid' }
    const re = compileFancy(pattern)
    return re ? { kind: 'fancy', re } : { kind: 'invalid' }
  }
}

function compiled(pattern: string): Compiled {
  let entry = cache.get(pattern)
  if (!entry) {
    entry = compile(pattern)
    cache.remember(pattern, entry)
  }
  return entry
}

const sandbox = vm.createContext({ re: /(?:)/, input: '' })
const fancyTest = new vm.Script('re.lastIndex = 0, re.test(input)')
// Run once now, untimed: the first run compiles the script in the context, which on a busy machine
// took longer than the cap and failed the first fancy pattern a process evaluated.
fancyTest.runInContext(sandbox)

/** The run was stopped at its time limit before it answered. */
const TIMED_OUT = Symbol('timed out')

/**
 * Runs again after a timeout in which this thread used under half the limit in CPU time: the
 * limit is wall-clock, and on a loaded machine the thread can be descheduled for that long (a
 * benign pattern then failed to match), whereas a pattern that really backtracks keeps the CPU busy.
 */
const DESCHEDULED_RETRIES = 2

function runFancy(re: RegExp, input: string, limitMs: number): boolean | typeof TIMED_OUT {
  sandbox.re = re
  sandbox.input = input
  for (let attempt = 0; ; attempt++) {
    const cpu = threadCpuMillis()
    try {
      return fancyTest.runInContext(sandbox, { timeout: limitMs }) === true
    } catch {
      if (attempt >= DESCHEDULED_RETRIES || threadCpuMillis() - cpu >= limitMs / 2) return TIMED_OUT
    }
  }
}

/**
 * The matching time one request may still spend, in milliseconds of `clock` (a monotonic clock
 * passed in by the caller, so that tests can drive it). Both engines are charged: the linear one
 * is cheap per match but not on megabyte values.
 */
export interface RegexBudget {
  readonly clock: () => number
  remainingMs: number
}

function searchWithin(
  entry: Exclude<Compiled, { kind: 'invalid' }>,
  input: string,
  budget: RegexBudget,
): boolean | null {
  // vm takes whole milliseconds: with less than one left, a fancy pattern cannot run
  const limit = Math.min(BACKTRACKING_MATCH_LIMIT_MS, Math.floor(budget.remainingMs))
  if (budget.remainingMs <= 0 || (entry.kind === 'fancy' && limit < 1)) throw regexBudgetExhausted()
  const started = budget.clock()
  const found = entry.kind === 'linear' ? entry.re.test(input) : runFancy(entry.re, input, limit)
  budget.remainingMs -= budget.clock() - started
  if (found !== TIMED_OUT) return found
  // stopped by the budget short of the match limit: the answer is unknown, so the flag fails
  if (limit < BACKTRACKING_MATCH_LIMIT_MS) throw regexBudgetExhausted()
  return null
}

/**
 * Unanchored search of `pattern` in `input`. Returns null for an invalid
 * pattern or an evaluation that hit the match limit; callers treat null as a
 * non-match for both `regex` and `not_regex`. With a budget, throws
 * `regexBudgetExhausted` (a FlagEvaluationError) once the request's matching
 * time is spent.
 */
export function regexSearch(pattern: string, input: string, budget?: RegexBudget | null): boolean | null {
  const entry = compiled(pattern)
  if (entry.kind === 'invalid') return null
  if (budget) return searchWithin(entry, input, budget)
  if (entry.kind === 'linear') return entry.re.test(input)
  const found = runFancy(entry.re, input, BACKTRACKING_MATCH_LIMIT_MS)
  return found === TIMED_OUT ? null : found
}

/** Whether `pattern` runs on the backtracking engine (look-around, back-references): each match may take the full limit. */
export function needsBacktracking(pattern: string): boolean {
  return compiled(pattern).kind === 'fancy'
}
