import { expect } from 'chai'
import { MAX_NESTING, nestsDeeperThan } from '../../../core/capture/nesting.ts'

describe('nestsDeeperThan', () => {
  const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`

  it('counts objects and arrays opened inside each other', () => {
    expect(nestsDeeperThan(nested(3), 3)).to.equal(false)
    expect(nestsDeeperThan(nested(4), 3)).to.equal(true)
    expect(nestsDeeperThan('[[[]]]', 2)).to.equal(true)
    expect(nestsDeeperThan('[[],[],[]]', 2)).to.equal(false)
  })

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan('{"a":"[[[[{{{{\\"[[[["}', 1)).to.equal(false)
    expect(nestsDeeperThan('["\\\\",[[]]]', 2)).to.equal(true)
  })

  it('stops at the first level over the cap, whatever follows (a million-level payload)', () => {
    const started = performance.now()
    expect(nestsDeeperThan('['.repeat(1_000_000), MAX_NESTING)).to.equal(true)
    expect(performance.now() - started).to.be.lessThan(50)
  })

  it('agrees with a character-by-character reading on random texts of quotes, backslashes and brackets', () => {
    const reference = (text: string, max: number): boolean => {
      let depth = 0
      let inString = false
      for (let i = 0; i < text.length; i++) {
        const c = text[i]
        if (inString) {
          if (c === '\\') i++
          else if (c === '"') inString = false
        } else if (c === '"') inString = true
        else if (c === '{' || c === '[') {
          if (++depth > max) return true
        } else if (c === '}' || c === ']') depth--
      }
      return false
    }
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff)
    const alphabet = ['"', '\\', '{', '[', '}', ']', 'a', '\\\\']
    for (let run = 0; run < 5_000; run++) {
      const text = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join('')
      for (const max of [0, 1, 2, 4])
        expect(nestsDeeperThan(text, max), `${JSON.stringify(text)} max ${max}`).to.equal(reference(text, max))
    }
  })

  it('reads a long string with many escaped quotes in linear time', () => {
    const started = performance.now()
    expect(nestsDeeperThan(`"${'\\\\\\"['.repeat(200_000)}"[`, 0)).to.equal(true)
    expect(nestsDeeperThan(`"${'\\'.repeat(1_000_000)}\\"[`, 0)).to.equal(false)
    expect(performance.now() - started).to.be.lessThan(200)
  })
})
