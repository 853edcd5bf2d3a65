import { createHash, hash } from 'node:crypto'
import { expect } from 'chai'
import { sha1Prefix60 } from '../../../../plugins/decide/evaluator/sha1-prefix.ts'

/** The definition in flags.md §2: node:crypto's SHA-1 of the UTF-8 bytes, first 15 hex digits. */
function reference(text: string): number {
  return Number(BigInt(`0x${hash('sha1', text, 'hex').slice(0, 15)}`))
}

/** Texts whose prefix differs from node:crypto's, with both values, so a failure shows which. */
function mismatches(texts: string[]): { text: string; actual: number; expected: number }[] {
  return texts
    .map((text) => ({ text, actual: sha1Prefix60(text), expected: reference(text) }))
    .filter(({ actual, expected }) => actual !== expected)
}

/** A small seeded generator (mulberry32), so a failing string can be reproduced. */
function seededRandom(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000
  }
}

describe('sha1Prefix60', () => {
  it('gives the first 15 hex digits of the FIPS 180 "abc" test vector', () => {
    // SHA-1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d
    expect(sha1Prefix60('abc')).to.equal(Number(0xa9993e364706816n))
  })

  it('hashes the empty string and single characters as node:crypto does', () => {
    expect(mismatches(['', 'a', '.', '\u0000', 'é', '€', '😀', '\ud800', '\udc00'])).to.deep.equal([])
  })

  it('pads every ASCII length from 0 to 200 bytes, across the 55/56/64-byte block boundaries', () => {
    const texts = Array.from({ length: 201 }, (_, n) => 'beta-feature-12.user-1234variant'.repeat(7).slice(0, n))
    expect(mismatches(texts)).to.deep.equal([])
  })

  it('counts UTF-8 bytes, not characters, when a multi-byte character straddles a block boundary', () => {
    const texts: string[] = []
    for (const char of ['é', '€', '😀']) {
      for (let n = 45; n <= 70; n++) texts.push(`${'x'.repeat(n)}${char}`, `${char}${'x'.repeat(n)}`)
    }
    expect(mismatches(texts)).to.deep.equal([])
  })

  it('hashes multi-block texts, including ones longer than the shared 4 KiB buffer', () => {
    const texts = [100, 1000, 1365, 1366, 5000, 20_000].flatMap((n) => [
      'k'.repeat(n),
      'ü'.repeat(n),
      '😀'.repeat(n >> 1),
    ])
    expect(mismatches(texts)).to.deep.equal([])
  })

  it('encodes lone and misordered surrogates as U+FFFD, as node:crypto does', () => {
    const texts = [
      'a\ud800',
      '\ud800b',
      'a\udc00b',
      '\udc00\ud800',
      '\ud83d\ud83d\ude00',
      `flag.${'x'.repeat(50)}\udbff`,
      '\ud800\ud800',
    ]
    expect(mismatches(texts)).to.deep.equal([])
    expect(sha1Prefix60('a\ud800')).to.equal(sha1Prefix60('a\ufffd'))
  })

  it('is unaffected by a longer text hashed just before (the shared buffer is re-padded)', () => {
    const short = 'simple-flag.distinct_id_0'
    const expected = reference(short)
    sha1Prefix60('z'.repeat(300))
    expect(sha1Prefix60(short)).to.equal(expected)
  })

  it('matches node:crypto for 3,000 generated strings of ASCII, BMP, astral and surrogate characters', () => {
    const random = seededRandom(20261123)
    const alphabets = [
      () => String.fromCharCode(0x20 + Math.floor(random() * 0x5f)),
      () => String.fromCharCode(0x80 + Math.floor(random() * 0x780)),
      () => String.fromCharCode(0x800 + Math.floor(random() * 0xd000)),
      () => String.fromCodePoint(0x10000 + Math.floor(random() * 0xfffff)),
      () => String.fromCharCode(0xd800 + Math.floor(random() * 0x800)),
    ]
    const texts = Array.from({ length: 3000 }, (_, i) => {
      const length = i % 3 === 0 ? Math.floor(random() * 150) : 20 + Math.floor(random() * 45)
      let text = ''
      for (let j = 0; j < length; j++)
        text += random() < 0.8 ? alphabets[0]() : alphabets[1 + Math.floor(random() * 4)]()
      return text
    })
    expect(mismatches(texts)).to.deep.equal([])
  })

  it('rounds the 60-bit prefix once, as Number(bigint) does', () => {
    const texts = Array.from({ length: 2000 }, (_, i) => `flag-${i % 50}.user-${i}${i % 2 ? 'variant' : ''}`)
    const exact = (text: string) => Number(createHash('sha1').update(text, 'utf8').digest().readBigUInt64BE(0) >> 4n)
    expect(texts.filter((text) => sha1Prefix60(text) !== exact(text))).to.deep.equal([])
  })
})
