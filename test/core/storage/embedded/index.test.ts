import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo } from '../../../../core/storage/embedded/index.ts'

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })

describe('startEmbeddedMongo', () => {
  let dataDir: string
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-embedded-'))
  })
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

  for (const runIn of ['worker', 'current-thread'] as const) {
    it(`serves the driver on an ephemeral port and releases it on close (${runIn})`, async () => {
      const server = await startEmbeddedMongo({ dataDir, runIn })
      expect(server.url).to.equal(`mongodb://127.0.0.1:${server.port}/?directConnection=true`)
      const client = new MongoClient(server.url)
      try {
        await client.db('app').collection('c').insertOne({ ok: true })
        expect(await client.db('app').collection('c').countDocuments()).to.equal(1)
      } finally {
        await client.close()
      }
      await server.close()
      await server.close()
      expect(await refused(server.port)).to.equal(true)
    })
  }

  it('answers as a one-member replica set when given a replica set name', async () => {
    const server = await startEmbeddedMongo({ dataDir, replSetName: 'rs0', runIn: 'current-thread' })
    const client = new MongoClient(server.url)
    try {
      expect(server.url).to.match(/directConnection=true&replicaSet=rs0$/)
      const hello = await client.db('admin').command({ hello: 1 })
      expect([hello.setName, hello.isWritablePrimary, hello.hosts]).to.deep.equal(['rs0', true, [`127.0.0.1:${server.port}`]])
    } finally {
      await client.close()
      await server.close()
    }
  })

  it('fails to start, releasing the folder, when the port is taken', async () => {
    const first = await startEmbeddedMongo({ dataDir, runIn: 'current-thread' })
    const otherDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-embedded-'))
    try {
      const error = await startEmbeddedMongo({ dataDir: otherDir, port: first.port, runIn: 'current-thread' }).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e.code,
      )
      expect(error).to.equal('EADDRINUSE')
      const again = await startEmbeddedMongo({ dataDir: otherDir, runIn: 'current-thread' })
      await again.close()
    } finally {
      await first.close()
      rmSync(otherDir, { recursive: true, force: true })
    }
  })
})
