import vm from 'node:vm';
import { RE2JS } from 're2js';
import { TextMemo } from './memo.ts';

/**
 * Operator-written patterns run against user-controlled values, so matching
 * must never stall the event loop. The server uses fancy_regex, which hands
 * ordinary patterns to the linear-time `regex` crate and runs only look-around
 * and back-references on a backtracking VM capped at 10,000 steps. We mirror
 * that split: RE2 syntax (the ancestor of Rust's syntax) in re2js, linear
 * time, for ordinary patterns; V8's backtracking engine under a wall-clock cap
 * for the fancy ones. Hitting the cap is a matching error, like the server's
 * backtrack limit: no match for either `regex` or `not_regex`.
 */

/** Comparable to fancy_regex's 10,000 backtracking steps, with headroom for a busy machine. */
const FANCY_TIME_LIMIT_MS = 10;
const CACHE_LIMIT = 500;

type Compiled =
  | { kind: 'linear'; re: RE2JS }
  | { kind: 'fancy'; re: RegExp }
  | { kind: 'invalid' };

const cache = new TextMemo<Compiled>(CACHE_LIMIT);

/** Features the `regex` crate rejects and fancy_regex adds. */
const FANCY_FEATURE = /\(\?<?[=!]|\(\?>|\\[1-9]|\\k<|\\G|[*+?}]\+/;

function compileFancy(pattern: string): RegExp | null {
  // Rust inline flags at the very start become JavaScript flags; named groups lose the P.
  let source = pattern.replace(/\(\?P</g, '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
  let flags = 'u';
  const leading = /^\(\?([imsx]+)\)/.exec(source);
  if (leading) {
    if (leading[1].includes('x')) return null;
    flags += leading[1];
    source = source.slice(leading[0].length);
  }
  source = source.replace(/\\A/g, '^').replace(/\\z/g, '$');
  try {
    return new RegExp(source, flags);
  } catch {
    return null;
  }
}

function compile(pattern: string): Compiled {
  try {
    return { kind: 'linear', re: RE2JS.compile(pattern) };
  } catch {
    if (!FANCY_FEATURE.test(pattern)) return { kind: 'invalid' };
    const re = compileFancy(pattern);
    return re ? { kind: 'fancy', re } : { kind: 'invalid' };
  }
}

function compiled(pattern: string): Compiled {
  let entry = cache.get(pattern);
  if (!entry) {
    entry = compile(pattern);
    cache.remember(pattern, entry);
  }
  return entry;
}

const sandbox = vm.createContext({ re: /(?:)/, input: '' });
const fancyTest = new vm.Script('re.lastIndex = 0, re.test(input)');
// Run once now, untimed: the first run compiles the script in the context, which on a busy machine
// took longer than the cap and failed the first fancy pattern a process evaluated.
fancyTest.runInContext(sandbox);

function runFancy(re: RegExp, input: string): boolean | null {
  sandbox.re = re;
  sandbox.input = input;
  try {
    return fancyTest.runInContext(sandbox, { timeout: FANCY_TIME_LIMIT_MS }) === true;
  } catch {
    return null;
  }
}

/**
 * Unanchored search of `pattern` in `input`. Returns null for an invalid
 * pattern or an evaluation that hit the limit; callers treat null as a
 * non-match for both `regex` and `not_regex`.
 */
export function regexSearch(pattern: string, input: string): boolean | null {
  const entry = compiled(pattern);
  switch (entry.kind) {
    case 'invalid':
      return null;
    case 'linear':
      return entry.re.test(input);
    case 'fancy':
      return runFancy(entry.re, input);
  }
}
