import { expect } from 'chai'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { httpTarget } from './load.ts'

/** A real node:http server that records each body it receives and answers with `status`. */
async function server(status: () => number) {
  const bodies: string[] = []
  const instance = http.createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk))
    request.on('end', () => {
      bodies.push(body)
      response.writeHead(status(), { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => instance.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(instance.address() as AddressInfo).port}`
  return { url, bodies, close: () => new Promise((resolve) => instance.close(resolve)) }
}

describe('bench closed loop (autocannon in its own thread)', () => {
  it('sends the bodies in turn and brings back a latency for every 2xx answer', async () => {
    const target = await server(() => 200)
    try {
      const load = httpTarget({
        url: target.url,
        path: '/x',
        bodies: ['{"a":1}', '{"b":2}'],
        connections: 4,
        pid: process.pid,
      })
      const sample = await load.slice(0.5)
      expect(sample.units).to.be.greaterThan(10)
      expect(sample.latencies.totalCount).to.equal(sample.units)
      expect(new Set(target.bodies)).to.deep.equal(new Set(['{"a":1}', '{"b":2}']))
    } finally {
      await target.close()
    }
  })

  it('fails the slice with what went wrong when a request is answered non-2xx', async () => {
    let count = 0
    const target = await server(() => (++count === 5 ? 503 : 200))
    try {
      const load = httpTarget({ url: target.url, path: '/x', bodies: ['{}'], connections: 2, pid: process.pid })
      const outcome = await load.slice(0.3).then(
        () => 'resolved',
        (error: Error) => error.message,
      )
      expect(outcome).to.match(/\/x: 1 non-2xx answers/)
    } finally {
      await target.close()
    }
  })
})
