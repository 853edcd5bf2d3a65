import { expect } from 'chai'
import { gzipSync } from 'node:zlib'
import {
  compressionHint,
  hasGzipMagic,
  isLooseBase64,
  isStrictBase64,
  looksLikeForm,
  restorePlus,
  startsLikeForm,
} from '../../../core/capture/sniff.ts'

const bytes = (text: string) => Buffer.from(text)

describe('capture payload sniffing', () => {
  it('maps every compression spelling PostHog knows, in any case, and nothing else', () => {
    expect(
      ['gzip', 'GZIP', 'gzip-js', 'lz64', 'LZ-String', 'base64', 'b64', ' gzip '].map(compressionHint),
    ).to.deep.equal(['gzip', 'gzip', 'gzip', 'lz64', 'lz64', 'base64', 'base64', 'gzip'])
    expect(['', 'br', 'deflate', 'identity', undefined].map(compressionHint)).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
  })

  it('recognises gzip by its two magic bytes', () => {
    expect(hasGzipMagic(gzipSync('x'))).to.equal(true)
    expect(hasGzipMagic(bytes('{}'))).to.equal(false)
    expect(hasGzipMagic(Buffer.from([0x1f]))).to.equal(false)
  })

  it('sniffs a form that opens with a posthog-js field whatever the content type says', () => {
    expect(startsLikeForm(bytes('data=eyJ9&compression=base64'))).to.equal(true)
    expect(startsLikeForm(bytes('compression=lz64&data=x'))).to.equal(true)
    expect(startsLikeForm(bytes('ver=1&data=x'))).to.equal(true)
    expect(startsLikeForm(bytes('{"data=":1}'))).to.equal(false)
    expect(startsLikeForm(bytes('x=1&data=2'))).to.equal(false)
  })

  it('takes a field after & within the first 128 bytes as a form when the client declared one', () => {
    expect(looksLikeForm(bytes('x=1&data=2'))).to.equal(true)
    expect(looksLikeForm(bytes(`${'x'.repeat(130)}&data=2`))).to.equal(false)
  })

  it('tells strict base64 from the loose kind a urldecoded form leaves behind', () => {
    expect(isStrictBase64('eyJhIjoxfQ==')).to.equal(true)
    expect(isStrictBase64('eyJhIjoxfQ')).to.equal(false)
    expect(isStrictBase64('{"a":1}')).to.equal(false)
    expect(isStrictBase64('')).to.equal(false)
    expect(isLooseBase64('eyJh Ijox fQ')).to.equal(true)
    expect(isLooseBase64('eyJhIjoxfQ')).to.equal(true)
    expect(isLooseBase64('{"a": 1}')).to.equal(false)
  })

  it('turns spaces back into + only in base64 text', () => {
    expect(restorePlus('ab c+d e=')).to.equal('ab+c+d+e=')
    expect(restorePlus('{"a": "b c"}')).to.equal('{"a": "b c"}')
  })
})
