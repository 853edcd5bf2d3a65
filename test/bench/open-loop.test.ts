import { expect } from 'chai'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { openLoopTarget } from './open-loop.ts'

/** A real node:http server that records when each request arrived and answers when `hold` says. */
async function recordingServer(hold: (sinceFirstMs: number) => number) {
  const arrivals: number[] = []
  const server = http.createServer((request, response) => {
    const now = performance.now()
    arrivals.push(now)
    request.resume()
    request.on('end', () => setTimeout(() => response.end('{}'), hold(now - arrivals[0]!)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, arrivals, close: () => new Promise((resolve) => server.close(resolve)) }
}

describe('bench open loop', () => {
  it('spreads the requests of a second evenly instead of sending them in a burst at its start', async () => {
    const server = await recordingServer(() => 0)
    try {
      const target = openLoopTarget({ url: server.url, path: '/', bodies: ['{}'], pid: process.pid, rate: 400 })
      const sample = await target.slice(1.5)
      expect(sample.units).to.equal(600)
      const first = server.arrivals[0]!
      const perWindow = new Map<number, number>()
      for (const at of server.arrivals) {
        const window = Math.floor((at - first) / 100)
        perWindow.set(window, (perWindow.get(window) ?? 0) + 1)
      }
      // 40 per 100 ms asked; a burst (autocannon's rate sends a second's 400 in its first tens of ms) would
      // put most of them in one window. A stalled machine may bunch two windows' worth, not ten.
      expect(Math.max(...perWindow.values())).to.be.at.most(120)
      expect(perWindow.size).to.be.at.least(12)
    } finally {
      await server.close()
    }
  })

  it('keeps sending on schedule while the server stalls, and counts the wait for a free connection', async () => {
    // every request arriving between 200 and 500 ms is answered at 500 ms: the pool's 64 connections fill,
    // later requests wait in the client. Those scheduled in [200, 400) ms are all answered ≥ 100 ms late.
    // A closed loop would have sent one per connection during the stall and seen at most that many late
    // answers; a clock started when a connection frees would see at most the 64 on the wire.
    const server = await recordingServer((sinceFirst) => (sinceFirst >= 200 && sinceFirst < 500 ? 500 - sinceFirst : 0))
    try {
      const target = openLoopTarget({ url: server.url, path: '/', bodies: ['{}'], pid: process.pid, rate: 500 })
      const sample = await target.slice(1)
      expect(sample.units).to.equal(500)
      expect(sample.latencies.totalCount).to.equal(500)
      expect(sample.latencies.getValueAtPercentile(84)).to.be.at.least(100_000)
    } finally {
      await server.close()
    }
  })

  it('fails the slice, without hanging, when a connection drops mid-answer', async () => {
    let count = 0
    const server = http.createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        if (++count !== 10) return response.end('{}')
        response.writeHead(200, { 'content-length': '100' })
        response.write('{"partial":')
        response.socket?.destroy()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const target = openLoopTarget({ url, path: '/', bodies: ['{}'], pid: process.pid, rate: 200 })
      const outcome = await target.slice(0.5).then(
        () => 'resolved',
        (error: Error) => error.message,
      )
      expect(outcome).to.match(/closed before the answer ended|aborted|socket hang up|ECONNRESET/)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
