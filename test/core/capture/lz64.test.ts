import { expect } from 'chai'
import LZString from 'lz-string'
import { decompressLz64 } from '../../../core/capture/lz64.ts'

/** Deterministic pseudo-random text mixing ASCII, accented letters, CJK and astral emoji. */
function sampleText(seed: number, length: number): string {
  const alphabet = ['a', 'b', ' ', '{', '"', ':', 'é', 'ß', '漢', '字', '😀', '\u0000', '\uFFFF']
  let state = seed
  let text = ''
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31
    text += alphabet[state % alphabet.length]
  }
  return text
}

describe('decompressLz64', () => {
  it('inverts lz-string compressToBase64 for JSON, Unicode and repetitive text', async () => {
    const inputs = [
      'x',
      JSON.stringify({ event: '$pageview', properties: { token: 'phc_key', $current_url: 'https://a.example/ü' } }),
      'ab'.repeat(10_000),
      ...Array.from({ length: 60 }, (_, seed) => sampleText(seed + 1, seed * 37)),
    ]
    for (const input of inputs) {
      const result = await decompressLz64(LZString.compressToBase64(input), 10_000_000)
      expect(result).to.deep.equal({ ok: true, text: input })
    }
  })

  it('agrees with lz-string decompressFromBase64 on every sample', async () => {
    for (let seed = 100; seed < 140; seed++) {
      const compressed = LZString.compressToBase64(sampleText(seed, 500))
      const ours = await decompressLz64(compressed, 10_000_000)
      expect(ours.ok && ours.text).to.equal(LZString.decompressFromBase64(compressed))
    }
  })

  it('decodes the empty stream lz-string writes for an empty string', async () => {
    expect(await decompressLz64(LZString.compressToBase64(''), 10)).to.deep.equal({ ok: true, text: '' })
  })

  it('reports a stream cut short as corrupt', async () => {
    const compressed = LZString.compressToBase64(sampleText(7, 2000))
    expect(await decompressLz64(compressed.slice(0, compressed.length / 2), 10_000_000)).to.deep.equal({
      ok: false,
      reason: 'corrupt',
    })
  })

  it('reports text that is not an lz-string stream as corrupt', async () => {
    expect(await decompressLz64('AAAA', 1000)).to.deep.equal({ ok: false, reason: 'corrupt' })
    expect(await decompressLz64('', 1000)).to.deep.equal({ ok: false, reason: 'corrupt' })
  })

  it('stops at the output budget instead of building the whole text', async () => {
    const compressed = LZString.compressToBase64('z'.repeat(300_000))
    expect(await decompressLz64(compressed, 299_999)).to.deep.equal({ ok: false, reason: 'too_large' })
    const whole = await decompressLz64(compressed, 300_000)
    expect(whole.ok && whole.text.length).to.equal(300_000)
  })
})
