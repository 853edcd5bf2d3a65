import { expect } from 'chai'
import { once } from 'node:events'
import { createGzip, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { decodePayload, type DecodeLimits, type RawCaptureRequest } from '../../../core/capture/decode.ts'
import { rejectionOf } from './http-error-helpers.ts'

const MB = 1024 * 1024
const limits: DecodeLimits = { maxBodyBytes: 20 * MB, maxDecodedBytes: 20 * MB }
const payload = JSON.stringify({
  api_key: 'phc_key',
  batch: [{ event: 'clicked', distinct_id: 'ü-user', properties: { token: 'phc_key', note: 'a+b/c=d ✓' } }],
})
const base64 = (text: string | Buffer) => Buffer.from(text).toString('base64')

/** Gzips `megabytes` of zeros by streaming one reused chunk, so the test never holds the whole. */
async function gzipBomb(megabytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 })
  const chunks: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk))
  const zeros = Buffer.alloc(MB)
  for (let i = 0; i < megabytes; i++) gzip.write(zeros)
  gzip.end()
  await once(gzip, 'end')
  return Buffer.concat(chunks)
}

function request(body: Buffer | string, overrides: Partial<RawCaptureRequest> = {}): RawCaptureRequest {
  return { method: 'POST', path: '/e/', query: {}, body: Buffer.from(body), ...overrides }
}

describe('decodePayload', () => {
  describe('plain and gzip bodies', () => {
    it('returns a plain JSON body as it is', async () => {
      expect(await decodePayload(request(payload, { contentType: 'application/json' }), limits)).to.equal(payload)
    })

    it('gunzips a body marked with Content-Encoding: gzip', async () => {
      const req = request(gzipSync(payload), { path: '/batch/', contentEncoding: 'gzip' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    for (const compression of ['gzip', 'gzip-js', 'GZIP']) {
      it(`gunzips a body marked with ?compression=${compression}`, async () => {
        const req = request(gzipSync(payload), { query: { compression } })
        expect(await decodePayload(req, limits)).to.equal(payload)
      })
    }

    it('gunzips an unmarked text/plain body by its magic bytes, as posthog-js sends it', async () => {
      const req = request(gzipSync(payload), { path: '/i/v0/e/', contentType: 'text/plain' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('reads a body marked gzip that is not gzip as plain text', async () => {
      const req = request(payload, { contentEncoding: 'gzip', query: { compression: 'gzip-js' } })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('ignores an unknown compression value', async () => {
      expect(await decodePayload(request(payload, { query: { compression: 'brotli' } }), limits)).to.equal(payload)
    })

    it('tolerates the retry_count, _, ver and sent_at query parameters', async () => {
      const query = { retry_count: '2', _: '1700000000000', ver: '1.200.0', sent_at: '1700000000000' }
      expect(await decodePayload(request(gzipSync(payload), { query }), limits)).to.equal(payload)
    })

    it('decompresses off the event loop, so other work runs while a big body inflates', async () => {
      const big = JSON.stringify({
        batch: Array.from({ length: 40_000 }, (_, i) => ({ event: `e${i}`, distinct_id: `u${i}` })),
      })
      let otherWorkRan = false
      setImmediate(() => (otherWorkRan = true))
      const text = await decodePayload(request(gzipSync(big)), limits)
      expect(text).to.equal(big)
      expect(otherWorkRan).to.equal(true)
    })
  })

  describe('base64 and lz64', () => {
    for (const path of ['/e/', '/i/v0/e/', '/batch/', '/capture', '/track/', '/engage/']) {
      it(`unwraps a strict base64 body on ${path}`, async () => {
        expect(await decodePayload(request(base64(payload), { path }), limits)).to.equal(payload)
      })
    }

    it('unwraps base64 around gzip', async () => {
      expect(await decodePayload(request(base64(gzipSync(payload)), { path: '/batch' }), limits)).to.equal(payload)
    })

    it('unwraps base64 a second time on the legacy paths only', async () => {
      const twice = base64(base64(payload))
      expect(await decodePayload(request(twice, { path: '/e' }), limits)).to.equal(payload)
      expect(await decodePayload(request(twice, { path: '/track/' }), limits)).to.equal(payload)
      expect(await decodePayload(request(twice, { path: '/i/v0/e/' }), limits)).to.equal(base64(payload))
    })

    it('decompresses an lz64 body marked with ?compression=lz64', async () => {
      const req = request(LZString.compressToBase64(payload), { path: '/batch/', query: { compression: 'lz64' } })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('decompresses an lz64 form field, the way older posthog-js posts it', async () => {
      const body = `data=${encodeURIComponent(LZString.compressToBase64(payload))}&compression=lz-string&ver=1.0`
      const req = request(body, { contentType: 'application/x-www-form-urlencoded' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('restores the + signs that urldecoding turned into spaces in an lz64 form field', async () => {
      const compressed = LZString.compressToBase64(payload)
      expect(compressed).to.include('+')
      const req = request(`compression=lz64&data=${compressed}`, { contentType: 'application/x-www-form-urlencoded' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('decompresses lz64 whatever padding lz-string chose, up to three = signs', async () => {
      for (let n = 0; n < 12; n++) {
        const text = JSON.stringify({
          api_key: `phc_${'k'.repeat(n)}`,
          event: 'e'.repeat((n % 5) + 1),
          distinct_id: 'd',
        })
        const compressed = LZString.compressToBase64(text)
        const req = request(`data=${encodeURIComponent(compressed)}`, {
          contentType: 'application/x-www-form-urlencoded',
          query: { compression: 'lz64' },
        })
        expect(await decodePayload(req, limits), compressed).to.equal(text)
      }
    })

    it('reads a plain JSON body marked lz64 as plain text', async () => {
      expect(await decodePayload(request(payload, { query: { compression: 'lz64' } }), limits)).to.equal(payload)
    })
  })

  describe('form bodies and the data query parameter', () => {
    const formType = 'application/x-www-form-urlencoded'

    it('reads base64 from a form data= field with ?compression=base64, as posthog-js beacons do', async () => {
      const body = `data=${encodeURIComponent(base64(payload))}`
      const req = request(body, { contentType: formType, query: { compression: 'base64' } })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('accepts a charset parameter on the form content type', async () => {
      const body = new URLSearchParams({ data: base64(gzipSync(payload)), compression: 'base64' }).toString()
      const req = request(body, { contentType: 'application/x-www-form-urlencoded; charset=UTF-8' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('reads urlencoded JSON from a form data= field', async () => {
      const req = request(new URLSearchParams({ data: payload }).toString(), { contentType: formType })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('reads a form body sent as text/plain when it opens with data=', async () => {
      const req = request(`data=${encodeURIComponent(base64(payload))}`, { contentType: 'text/plain' })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('does not mistake JSON holding "&data=" for a form when the client says JSON', async () => {
      const json = JSON.stringify({ event: 'x', properties: { url: 'https://a.example/?q=1&data=2' } })
      expect(await decodePayload(request(json, { contentType: 'application/json' }), limits)).to.equal(json)
    })

    it('reads a GET data= query parameter holding JSON', async () => {
      const req = request('', { method: 'GET', query: { data: payload, ver: '1', _: '1700000000000' } })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })

    it('reads a GET data= query parameter holding base64 whose + signs became spaces', async () => {
      const encoded = base64(`${payload}   ~~~~`)
      expect(encoded).to.include('+')
      const req = request('', { method: 'GET', query: { data: encoded.replaceAll('+', ' ') } })
      expect(await decodePayload(req, limits)).to.equal(`${payload}   ~~~~`)
    })

    it('prefers the data query parameter over the body', async () => {
      const req = request('{"ignored":true}', { query: { data: base64(payload) } })
      expect(await decodePayload(req, limits)).to.equal(payload)
    })
  })

  describe('refusals', () => {
    it('answers 400 empty_payload when there is neither a body nor a data parameter', async () => {
      const error = await rejectionOf(decodePayload(request('', { query: { data: '' } }), limits))
      expect([error.status, error.code, error.detail]).to.deep.equal([
        400,
        'empty_payload',
        'request missing data payload',
      ])
    })

    it('answers 400 empty_payload when a form has no data field', async () => {
      const req = request('compression=gzip&ver=1', { contentType: 'application/x-www-form-urlencoded' })
      const error = await rejectionOf(decodePayload(req, limits))
      expect([error.status, error.code, error.attr]).to.deep.equal([400, 'empty_payload', 'data'])
    })

    it('answers 400 empty_payload when the payload decodes to nothing', async () => {
      const error = await rejectionOf(decodePayload(request(gzipSync('  \n')), limits))
      expect([error.status, error.code]).to.deep.equal([400, 'empty_payload'])
    })

    it('answers 400 invalid_gzip for a truncated gzip body', async () => {
      const gzipped = gzipSync(payload)
      const error = await rejectionOf(decodePayload(request(gzipped.subarray(0, gzipped.length - 12)), limits))
      expect([error.status, error.code]).to.deep.equal([400, 'invalid_gzip'])
      expect(error.detail).to.match(/^invalid GZIP data/)
    })

    it('answers 400 invalid_gzip for garbage behind the gzip magic bytes', async () => {
      const error = await rejectionOf(decodePayload(request(Buffer.from([0x1f, 0x8b, 9, 9, 9, 9, 9, 9])), limits))
      expect([error.status, error.code]).to.deep.equal([400, 'invalid_gzip'])
    })

    it('answers 400 invalid_utf8 for bytes that are not UTF-8', async () => {
      const error = await rejectionOf(decodePayload(request(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), limits))
      expect([error.status, error.code, error.detail]).to.deep.equal([
        400,
        'invalid_utf8',
        'invalid UTF8 in request payload',
      ])
    })

    it('answers 400 invalid_lz64 for base64 text that is not an lz-string stream', async () => {
      const error = await rejectionOf(decodePayload(request('AAAA', { query: { compression: 'lz64' } }), limits))
      expect([error.status, error.code]).to.deep.equal([400, 'invalid_lz64'])
    })

    it('answers 413 when the body is over the wire limit', async () => {
      const req = request(Buffer.alloc(2048, 0x20))
      const error = await rejectionOf(decodePayload(req, { maxBodyBytes: 2047, maxDecodedBytes: MB }))
      expect([error.status, error.code]).to.deep.equal([413, 'payload_too_large'])
    })

    it('answers 413 when a plain body is over the decoded limit', async () => {
      const error = await rejectionOf(decodePayload(request(payload), { maxBodyBytes: MB, maxDecodedBytes: 10 }))
      expect(error.status).to.equal(413)
    })

    it('answers 413 for a gzip bomb without inflating it: 50 MB of zeros in a few KB', async () => {
      const bomb = await gzipBomb(50)
      expect(bomb.length).to.be.below(64 * 1024)
      const rssBefore = process.memoryUsage().rss
      const started = performance.now()
      const error = await rejectionOf(decodePayload(request(bomb), { maxBodyBytes: MB, maxDecodedBytes: MB }))
      expect([error.status, error.code]).to.deep.equal([413, 'payload_too_large'])
      expect(performance.now() - started).to.be.below(1000)
      expect(process.memoryUsage().rss - rssBefore).to.be.below(20 * MB)
    })

    it('answers 413 for lz64 text that would expand past the limit: 1.5 KB holding 500 KB', async () => {
      const bomb = LZString.compressToBase64('a'.repeat(500_000))
      expect(bomb.length).to.be.below(2048)
      const req = request(bomb, { query: { compression: 'lz64' } })
      const error = await rejectionOf(decodePayload(req, { maxBodyBytes: MB, maxDecodedBytes: 100_000 }))
      expect(error.status).to.equal(413)
    })
  })
})
