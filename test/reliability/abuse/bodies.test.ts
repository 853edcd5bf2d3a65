import { expect } from 'chai'
import { gzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'

const DECODED_LIMIT = 8 * 1024 * 1024
const BODY_LIMIT = 2 * 1024 * 1024

/** Posts a body while sampling this process's RSS (the service runs in it): status and peak growth. */
async function postSampled(url: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2)
  const started = performance.now()
  try {
    const response = await fetch(url, {
      method: 'POST',
      body: typeof body === 'string' ? body : new Uint8Array(body),
      headers,
    })
    const json = (await response.json()) as { code?: string }
    return {
      status: response.status,
      code: json.code,
      growthMb: (peak - before) / 2 ** 20,
      ms: performance.now() - started,
    }
  } finally {
    clearInterval(sampler)
  }
}

describe('abusive capture bodies', function () {
  this.timeout(60_000)
  let t: TestService
  let gzipBomb: Buffer
  before(async () => {
    t = await startTestService({
      plugins: defaultPlugins(),
      server: { bodyLimitBytes: BODY_LIMIT, decodedLimitBytes: DECODED_LIMIT },
    })
    // 1 GiB of zeros as 100 concatenated gzip members (one stream to gunzip): about 1 MB on the wire.
    const member = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20), { level: 9 })
    gzipBomb = Buffer.concat(Array.from({ length: 100 }, () => member))
    global.gc?.()
  })
  after(async () => t?.close())

  it('refuses a 1 GiB gzip bomb with 413 at the decoded limit, memory growing by about that limit only', async () => {
    expect(gzipBomb.length).to.be.lessThan(BODY_LIMIT)
    const result = await postSampled(`${t.url}/i/v0/e/`, gzipBomb, { 'Content-Encoding': 'gzip' })
    expect(result.status).to.equal(413)
    expect(result.code).to.equal('payload_too_large')
    expect(result.growthMb).to.be.lessThan(96)
  })

  it('refuses the same bomb sent base64-encoded in a form field, and as ?compression=gzip-js', async () => {
    const form = `data=${encodeURIComponent(gzipBomb.subarray(0, 1_000_000).toString('base64'))}&compression=gzip-js`
    const viaForm = await postSampled(`${t.url}/e/`, form, { 'Content-Type': 'application/x-www-form-urlencoded' })
    expect(viaForm.status).to.be.oneOf([400, 413])
    const viaQuery = await postSampled(`${t.url}/batch/?compression=gzip-js`, gzipBomb)
    expect(viaQuery.status).to.equal(413)
  })

  it('refuses an lz64 bomb with 413 without building its output', async () => {
    // LZString.compressToBase64('a'.repeat(16 MiB)), kept as a file: building it takes a minute.
    const bomb = readFileSync(path.join(import.meta.dirname, '../fixtures/lz64-bomb-16mib.txt'), 'utf8').trim()
    expect(bomb.length).to.be.lessThan(20_000)
    const result = await postSampled(`${t.url}/e/?compression=lz64`, `data=${encodeURIComponent(bomb)}`, {
      'Content-Type': 'application/x-www-form-urlencoded',
    })
    expect(result.status).to.equal(413)
    expect(result.growthMb).to.be.lessThan(96)
  })

  it('refuses a body over the wire limit with 413, by Content-Length and by bytes received', async () => {
    const declared = await postSampled(`${t.url}/i/v0/e/`, Buffer.alloc(BODY_LIMIT + 1, 0x20))
    expect(declared.status).to.equal(413)
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(new Uint8Array(BODY_LIMIT / 2).fill(0x20))
        controller.close()
      },
    })
    const response = await fetch(`${t.url}/i/v0/e/`, { method: 'POST', body: chunked, duplex: 'half' } as RequestInit)
    expect(response.status).to.equal(413)
  })

  it('refuses absurd nesting with 400 before parsing, in events, in $set and in a batch', async () => {
    const token = t.project.api_token
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
    const bodies = [
      `{"api_key":"${token}","event":"e","distinct_id":"d","properties":{"x":${deep(100_000)}}}`,
      `{"api_key":"${token}","event":"e","distinct_id":"d","properties":{"$set":{"x":${deep(150)}}}}`,
      `{"api_key":"${token}","batch":[{"event":"e","distinct_id":"d","properties":{"x":${'['.repeat(500_000)}}}]}`,
    ]
    for (const body of bodies) {
      const result = await postSampled(`${t.url}/i/v0/e/`, body)
      expect(result.status).to.equal(400)
      expect(result.code).to.equal('too_deeply_nested')
      expect(result.ms).to.be.lessThan(2_000)
    }
    const shallow = await postSampled(
      `${t.url}/i/v0/e/`,
      `{"api_key":"${token}","event":"e","distinct_id":"d","properties":{"x":${deep(50)}}}`,
    )
    expect(shallow.status).to.equal(200)
    const stored = await t.service.storage.db.collection('events').find({ project_id: t.project.id }).toArray()
    expect(stored).to.have.length(1)
  })
})
