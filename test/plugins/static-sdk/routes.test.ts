import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { request } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const require = createRequire(import.meta.url)
const version = (JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')) as { version: string })
  .version
const arrayJs = readFileSync(require.resolve('posthog-js/dist/array.js'))

/** A raw GET: fetch would decompress and hide Content-Encoding. */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('static-sdk routes', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'static-sdk' }, { plugin: 'sink-mongo', required: true }],
    })
  })
  after(() => t.close())

  it('serves /static/array.js from the installed package as JavaScript, briefly cached with an ETag', async () => {
    const res = await get(`${t.url}/static/array.js`)
    expect(res.status).to.equal(200)
    expect(res.body.equals(arrayJs)).to.equal(true)
    expect(res.headers['content-type']).to.equal('application/javascript; charset=utf-8')
    expect(res.headers['cache-control']).to.equal('public, max-age=3600')
    expect(res.headers['x-content-type-options']).to.equal('nosniff')
    expect(res.headers.etag).to.be.a('string')
  })

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await get(`${t.url}/static/array.js`)
    const again = await get(`${t.url}/static/array.js`, { 'If-None-Match': String(first.headers.etag) })
    expect(again.status).to.equal(304)
    expect(again.body.length).to.equal(0)
  })

  it('sends gzip to clients that accept it, and says the body varies by it', async () => {
    const res = await get(`${t.url}/static/array.js`, { 'Accept-Encoding': 'gzip, deflate, br' })
    expect(res.headers['content-encoding']).to.equal('gzip')
    expect(String(res.headers.vary)).to.match(/Accept-Encoding/)
    expect(res.body.length).to.be.below(arrayJs.length / 2)
    expect(gunzipSync(res.body).equals(arrayJs)).to.equal(true)
  })

  it('lets a page on another origin load it as a CORS script (crossorigin="anonymous")', async () => {
    const res = await get(`${t.url}/static/array.js`, { Origin: 'https://shop.example' })
    expect(res.headers['access-control-allow-origin']).to.equal('https://shop.example')
    expect(res.headers['cross-origin-resource-policy']).to.equal('cross-origin')
  })

  it('serves extensions at the versioned path posthog-js asks for, cached as immutable', async () => {
    const res = await get(`${t.url}/static/${version}/surveys.js`)
    expect(res.status).to.equal(200)
    expect(res.headers['content-type']).to.match(/^application\/javascript/)
    expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable')
    expect((await get(`${t.url}/static/surveys.js?v=${version}`)).status).to.equal(200)
  })

  it('answers 404 for another version, so posthog-js falls back to the unversioned path', async () => {
    const res = await get(`${t.url}/static/1.0.0/surveys.js`)
    expect(res.status).to.equal(404)
    expect(JSON.parse(res.body.toString()).detail).to.include(version)
  })

  it('answers 404 for files that are not in the package dist, and for paths out of it', async () => {
    for (const path of [
      '/static/nope.js',
      '/static/array.d.ts',
      '/static/..%2Fpackage.json',
      `/static/${version}/..%2F..%2Fpackage.json`,
    ]) {
      expect((await get(t.url + path)).status, path).to.equal(404)
    }
  })

  it('serves nothing when turned off', async () => {
    const off = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'static-sdk', options: { enabled: false } },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    try {
      expect((await get(`${off.url}/static/array.js`)).status).to.equal(404)
    } finally {
      await off.close()
    }
  })
})
