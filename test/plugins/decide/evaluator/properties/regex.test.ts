import { expect } from 'chai'
import { matches } from './helpers.ts'
import {
  BACKTRACKING_MATCH_LIMIT_MS,
  needsBacktracking,
  regexSearch,
} from '../../../../../plugins/decide/evaluator/properties/regex.ts'
import { FlagEvaluationError } from '../../../../../plugins/decide/evaluator/errors.ts'

describe('property operators: regex, not_regex (flags.md §8)', () => {
  it('searches anywhere in the text form of the value', () => {
    expect(matches('regex', 'ab+c', { key: 'xxabbbcxx' })).to.equal(true)
    expect(matches('regex', '^ab+c$', { key: 'xxabbbcxx' })).to.equal(false)
    expect(matches('regex', '^\\d+$', { key: 12345 })).to.equal(true)
    expect(matches('regex', 'true', { key: true })).to.equal(true)
    expect(matches('not_regex', 'ab+c', { key: 'xyz' })).to.equal(true)
    expect(matches('not_regex', 'ab+c', { key: 'abc' })).to.equal(false)
  })

  it('is case-sensitive unless the pattern says (?i)', () => {
    expect(matches('regex', 'hello', { key: 'HELLO world' })).to.equal(false)
    expect(matches('regex', '(?i)hello', { key: 'HELLO world' })).to.equal(true)
  })

  it('reads Rust-style named groups and classes', () => {
    expect(matches('regex', '(?P<user>\\w+)@example\\.com', { key: 'sam@example.com' })).to.equal(true)
    expect(matches('regex', '[[:digit:]]{3}', { key: 'abc123' })).to.equal(true)
  })

  it('supports look-around and back-references, as fancy_regex does', () => {
    expect(matches('regex', '(?<=@)example', { key: 'sam@example.com' })).to.equal(true)
    expect(matches('regex', '(?<!@)example', { key: 'sam@example.com' })).to.equal(false)
    expect(matches('regex', '(\\w)\\1', { key: 'hello' })).to.equal(true)
    expect(matches('not_regex', '(\\w)\\1', { key: 'helo' })).to.equal(true)
  })

  it('treats an invalid pattern as a non-match for both operators', () => {
    for (const pattern of ['(unclosed', '[a-', '*leading', 'a{2,1}']) {
      expect(matches('regex', pattern, { key: 'anything' }), pattern).to.equal(false)
      expect(matches('not_regex', pattern, { key: 'anything' }), pattern).to.equal(false)
    }
  })

  it('matches an absent key only for not_regex, even with an invalid pattern', () => {
    expect(matches('regex', 'x', {})).to.equal(false)
    expect(matches('not_regex', 'x', {})).to.equal(true)
    expect(matches('not_regex', '(unclosed', {})).to.equal(true)
  })

  describe('bounded matching', () => {
    it('answers a catastrophic pattern in linear time and gives the true answer', () => {
      const started = performance.now()
      expect(matches('regex', '^(a+)+$', { key: `${'a'.repeat(40)}b` })).to.equal(false)
      expect(matches('not_regex', '^(a+)+$', { key: `${'a'.repeat(40)}b` })).to.equal(true)
      expect(matches('regex', '^(a|a)*$', { key: `${'a'.repeat(5000)}b` })).to.equal(false)
      expect(performance.now() - started).to.be.below(200)
    })

    it('stops a catastrophic back-tracking pattern at its limit and answers no match for both operators', () => {
      const input = `${'a'.repeat(40)}b`
      const started = performance.now()
      expect(regexSearch('^(a+)+\\1$', input)).to.equal(null)
      expect(matches('regex', '^(a+)+\\1$', { key: input })).to.equal(false)
      expect(matches('not_regex', '^(a+)+\\1$', { key: input })).to.equal(false)
      expect(performance.now() - started).to.be.below(500)
    })

    it('keeps answering quickly for huge values', () => {
      const started = performance.now()
      expect(matches('regex', '(x+x+)+y', { key: 'x'.repeat(100_000) })).to.equal(false)
      expect(performance.now() - started).to.be.below(1000)
    })
  })
})

describe('regexSearch within a request budget', () => {
  const catastrophic = '^(a+)+\\1$'
  const crafted = `${'a'.repeat(30)}b`
  const budget = (remainingMs: number) => ({ clock: () => performance.now(), remainingMs })
  const timeoutError = (run: () => unknown) => {
    try {
      run()
    } catch (error) {
      return error instanceof FlagEvaluationError ? error.code : error
    }
    return 'no error'
  }

  it('gives the same answers and charges the time taken, for both engines', () => {
    const left = budget(1000)
    expect(regexSearch('ab+c', 'xxabbbcxx', left)).to.equal(true)
    expect(regexSearch('(?<=@)example', 'sam@example.com', left)).to.equal(true)
    expect(regexSearch('(?<!@)example', 'sam@example.com', left)).to.equal(false)
    expect(left.remainingMs).to.be.below(1000).and.above(0)
  })

  it('answers no match at the match limit, as the server does at its backtrack limit, when the budget had room for it', () => {
    const left = budget(1000)
    expect(regexSearch(catastrophic, crafted, left)).to.equal(null)
    // charged at least about the limit (the watchdog and the clock disagree by a fraction of a millisecond)
    expect(left.remainingMs).to.be.below(1000 - BACKTRACKING_MATCH_LIMIT_MS / 2)
  })

  it('fails (timeout) when less than the match limit is left and the match does not finish: its answer is unknown', () => {
    const left = budget(3)
    const started = performance.now()
    expect(timeoutError(() => regexSearch(catastrophic, crafted, left))).to.equal('timeout')
    expect(performance.now() - started).to.be.below(250)
  })

  it('fails (timeout) once nothing is left, for either engine, without running the pattern', () => {
    expect(timeoutError(() => regexSearch('ab+c', 'abc', budget(0)))).to.equal('timeout')
    expect(timeoutError(() => regexSearch('(\\w)\\1', 'hello', budget(-5)))).to.equal('timeout')
    expect(timeoutError(() => regexSearch('(?<=a)b', 'ab', budget(0.5)))).to.equal('timeout')
  })

  it('needs no time for an invalid pattern: still no match for both operators', () => {
    expect(regexSearch('(unclosed', 'anything', budget(0))).to.equal(null)
  })
})

describe('needsBacktracking', () => {
  it('is true only for valid patterns that need look-around or back-references', () => {
    for (const pattern of ['(?<=@)example', '(?!test)', '(\\w)\\1', '(?P<n>a)\\k<n>'])
      expect(needsBacktracking(pattern), pattern).to.equal(true)
    for (const pattern of ['ab+c', '^(a+)+$', '(?i)hello', '(?P<user>\\w+)@', '(unclosed', '(?<=unclosed'])
      expect(needsBacktracking(pattern), pattern).to.equal(false)
  })
})
