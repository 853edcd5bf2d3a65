import { expect } from 'chai';
import { matches } from './helpers.ts';
import { regexSearch } from '../../../../../plugins/decide/evaluator/properties/regex.ts';

describe('property operators: regex, not_regex (flags.md §8)', () => {
  it('searches anywhere in the text form of the value', () => {
    expect(matches('regex', 'ab+c', { key: 'xxabbbcxx' })).to.equal(true);
    expect(matches('regex', '^ab+c$', { key: 'xxabbbcxx' })).to.equal(false);
    expect(matches('regex', '^\\d+$', { key: 12345 })).to.equal(true);
    expect(matches('regex', 'true', { key: true })).to.equal(true);
    expect(matches('not_regex', 'ab+c', { key: 'xyz' })).to.equal(true);
    expect(matches('not_regex', 'ab+c', { key: 'abc' })).to.equal(false);
  });

  it('is case-sensitive unless the pattern says (?i)', () => {
    expect(matches('regex', 'hello', { key: 'HELLO world' })).to.equal(false);
    expect(matches('regex', '(?i)hello', { key: 'HELLO world' })).to.equal(true);
  });

  it('reads Rust-style named groups and classes', () => {
    expect(matches('regex', '(?P<user>\\w+)@example\\.com', { key: 'sam@example.com' })).to.equal(true);
    expect(matches('regex', '[[:digit:]]{3}', { key: 'abc123' })).to.equal(true);
  });

  it('supports look-around and back-references, as fancy_regex does', () => {
    expect(matches('regex', '(?<=@)example', { key: 'sam@example.com' })).to.equal(true);
    expect(matches('regex', '(?<!@)example', { key: 'sam@example.com' })).to.equal(false);
    expect(matches('regex', '(\\w)\\1', { key: 'hello' })).to.equal(true);
    expect(matches('not_regex', '(\\w)\\1', { key: 'helo' })).to.equal(true);
  });

  it('treats an invalid pattern as a non-match for both operators', () => {
    for (const pattern of ['(unclosed', '[a-', '*leading', 'a{2,1}']) {
      expect(matches('regex', pattern, { key: 'anything' }), pattern).to.equal(false);
      expect(matches('not_regex', pattern, { key: 'anything' }), pattern).to.equal(false);
    }
  });

  it('matches an absent key only for not_regex, even with an invalid pattern', () => {
    expect(matches('regex', 'x', {})).to.equal(false);
    expect(matches('not_regex', 'x', {})).to.equal(true);
    expect(matches('not_regex', '(unclosed', {})).to.equal(true);
  });

  describe('bounded matching', () => {
    it('answers a catastrophic pattern in linear time and gives the true answer', () => {
      const started = performance.now();
      expect(matches('regex', '^(a+)+$', { key: 'a'.repeat(40) + 'b' })).to.equal(false);
      expect(matches('not_regex', '^(a+)+$', { key: 'a'.repeat(40) + 'b' })).to.equal(true);
      expect(matches('regex', '^(a|a)*$', { key: 'a'.repeat(5000) + 'b' })).to.equal(false);
      expect(performance.now() - started).to.be.below(200);
    });

    it('stops a catastrophic back-tracking pattern at its limit and answers no match for both operators', () => {
      const input = 'a'.repeat(40) + 'b';
      const started = performance.now();
      expect(regexSearch('^(a+)+\\1$', input)).to.equal(null);
      expect(matches('regex', '^(a+)+\\1$', { key: input })).to.equal(false);
      expect(matches('not_regex', '^(a+)+\\1$', { key: input })).to.equal(false);
      expect(performance.now() - started).to.be.below(500);
    });

    it('keeps answering quickly for huge values', () => {
      const started = performance.now();
      expect(matches('regex', '(x+x+)+y', { key: 'x'.repeat(100_000) })).to.equal(false);
      expect(performance.now() - started).to.be.below(1000);
    });
  });
});
