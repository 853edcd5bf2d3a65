import { expect } from 'chai'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readBody } from '../../../core/http/read-body.ts'
import { HttpError } from '../../../core/errors.ts'

/** A server that answers each request with what readBody made of it: the byte count, or the error status. */
async function withServer(limit: number, run: (url: string) => Promise<void>): Promise<void> {
  const server = http.createServer((req, res) => {
    readBody(req, limit).then(
      (body) => res.end(JSON.stringify({ bytes: body.length })),
      (error: unknown) => {
        res.statusCode = error instanceof HttpError ? error.status : 500
        res.setHeader('Connection', 'close')
        res.end(JSON.stringify({ error: (error as Error).message }))
      },
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

describe('readBody', () => {
  it('reads a body sent in many chunks, and an empty one', async () => {
    await withServer(1000, async (url) => {
      const chunks = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new Uint8Array(99).fill(0x61))
          controller.close()
        },
      })
      const response = await fetch(url, { method: 'POST', body: chunks, duplex: 'half' } as RequestInit)
      expect(await response.json()).to.deep.equal({ bytes: 990 })
      expect(await (await fetch(url, { method: 'POST' })).json()).to.deep.equal({ bytes: 0 })
    })
  })

  it('refuses with 413 by declared length and by bytes received, and the client still reads the answer', async () => {
    await withServer(1000, async (url) => {
      expect((await fetch(url, { method: 'POST', body: 'x'.repeat(1001) })).status).to.equal(413)
      const chunks = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 50; i++) controller.enqueue(new Uint8Array(500).fill(0x61))
          controller.close()
        },
      })
      const response = await fetch(url, { method: 'POST', body: chunks, duplex: 'half' } as RequestInit)
      expect(response.status).to.equal(413)
    })
  })
})
