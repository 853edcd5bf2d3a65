import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo } from '../../../../core/storage/embedded/index.ts'
import { maxSocketPathBytes } from '../../../../core/storage/embedded/listen-address.ts'
import { tcpListeningPorts } from '../../../helpers/listening.ts'
import { folderPerTest } from '../../../helpers/folders.ts'

const refused = (where: { port: number; host: string } | { path: string }) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(where)
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })

const modeOf = (file: string) => statSync(file).mode & 0o777

async function roundTrip(url: string): Promise<number> {
  const client = new MongoClient(url)
  try {
    await client.db('app').collection('c').insertOne({ ok: true })
    return await client.db('app').collection('c').countDocuments()
  } finally {
    await client.close()
  }
}

describe('startEmbeddedMongo', () => {
  let dataDir: string
  folderPerTest('hedgerow-embedded-', (folder) => (dataDir = folder))

  for (const runIn of ['worker', 'current-thread'] as const) {
    it(`serves the driver on a Unix socket in the private data folder, and removes it on close (${runIn})`, async () => {
      const server = await startEmbeddedMongo({ dataDir, runIn })
      const socketPath = path.join(dataDir, 'mongod.sock')
      expect(server.socketPath).to.equal(socketPath)
      expect(server.url).to.equal(`mongodb://${encodeURIComponent(socketPath)}/?directConnection=true`)
      expect(statSync(socketPath).isSocket()).to.equal(true)
      expect([modeOf(dataDir), modeOf(socketPath)]).to.deep.equal([0o700, 0o600])
      expect(server.tcpUrl).to.equal(undefined)
      expect(await roundTrip(server.url)).to.equal(1)
      await server.close()
      await server.close()
      expect(existsSync(socketPath)).to.equal(false)
      expect(await refused({ path: socketPath })).to.equal(true)
    })
  }

  it('keeps the data on disk (lmdb) by default, in memory with EMBEDDED_MONGO_ENGINE=memory', async () => {
    const saved = process.env.EMBEDDED_MONGO_ENGINE
    try {
      delete process.env.EMBEDDED_MONGO_ENGINE
      const onDisk = await startEmbeddedMongo({ dataDir: path.join(dataDir, 'default'), runIn: 'current-thread' })
      expect(await roundTrip(onDisk.url)).to.equal(1)
      await onDisk.close()
      expect(existsSync(path.join(dataDir, 'default', 'lmdb', 'data.mdb'))).to.equal(true)

      process.env.EMBEDDED_MONGO_ENGINE = 'memory'
      const inMemory = await startEmbeddedMongo({ dataDir: path.join(dataDir, 'memory'), runIn: 'current-thread' })
      expect(await roundTrip(inMemory.url)).to.equal(1)
      await inMemory.close()
      expect(existsSync(path.join(dataDir, 'memory', 'lmdb'))).to.equal(false)
      expect(readdirSync(path.join(dataDir, 'memory')).some((f) => f.startsWith('wal-'))).to.equal(true)
    } finally {
      if (saved === undefined) delete process.env.EMBEDDED_MONGO_ENGINE
      else process.env.EMBEDDED_MONGO_ENGINE = saved
    }
  })

  it('opens no TCP port unless asked to', async function () {
    const before = tcpListeningPorts(process.pid)
    if (!before) this.skip()
    const server = await startEmbeddedMongo({ dataDir })
    try {
      expect(await roundTrip(server.url)).to.equal(1)
      expect(tcpListeningPorts(process.pid)).to.deep.equal(before)
    } finally {
      await server.close()
    }
  })

  it('refuses a connection from another user (the folder is 0700)', async function () {
    // Only root can run a process as another user; root itself passes any permission check.
    if (process.getuid?.() !== 0) this.skip()
    const server = await startEmbeddedMongo({ dataDir })
    try {
      const probe = `require('net').connect(${JSON.stringify(server.socketPath)}).on('connect', () => process.exit(0)).on('error', (e) => { console.log(e.code); process.exit(3) })`
      const child = spawn(process.execPath, ['-e', probe], {
        uid: 65534,
        gid: 65534,
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      expect([code, output.trim()]).to.deep.equal([3, 'EACCES'])
    } finally {
      await server.close()
    }
  })

  it('answers as a one-member replica set when given a replica set name', async () => {
    const server = await startEmbeddedMongo({ dataDir, replSetName: 'rs0', runIn: 'current-thread' })
    const client = new MongoClient(server.url)
    try {
      expect(server.url).to.match(/directConnection=true&replicaSet=rs0$/)
      const hello = await client.db('admin').command({ hello: 1 })
      expect([hello.setName, hello.isWritablePrimary, hello.hosts]).to.deep.equal(['rs0', true, [server.socketPath]])
    } finally {
      await client.close()
      await server.close()
    }
  })

  it('listens on TCP as well when asked (the standalone server for tools)', async () => {
    const server = await startEmbeddedMongo({ dataDir, tcp: { port: 0 }, runIn: 'current-thread' })
    try {
      expect(server.tcpUrl).to.equal(`mongodb://127.0.0.1:${server.tcpPort}/?directConnection=true`)
      expect(await roundTrip(server.tcpUrl!)).to.equal(1)
      expect(await roundTrip(server.url)).to.equal(2)
    } finally {
      await server.close()
    }
    expect(await refused({ port: server.tcpPort!, host: '127.0.0.1' })).to.equal(true)
  })

  it('fails to start, releasing the folder, when the TCP port is taken', async () => {
    const first = await startEmbeddedMongo({ dataDir, tcp: { port: 0 }, runIn: 'current-thread' })
    const otherDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-embedded-'))
    try {
      const error = await startEmbeddedMongo({
        dataDir: otherDir,
        tcp: { port: first.tcpPort },
        runIn: 'current-thread',
      }).then(
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

  it('puts the socket in a private temporary folder when the data folder path is too long for one', async () => {
    let deep = dataDir
    while (Buffer.byteLength(path.join(deep, 'mongod.sock')) <= maxSocketPathBytes())
      deep = path.join(deep, 'a-rather-long-folder-name')
    mkdirSync(deep, { recursive: true })
    const server = await startEmbeddedMongo({ dataDir: deep, runIn: 'current-thread' })
    const privateFolder = path.dirname(server.socketPath)
    try {
      expect(privateFolder.startsWith(os.tmpdir())).to.equal(true)
      expect(modeOf(privateFolder)).to.equal(0o700)
      expect(await roundTrip(server.url)).to.equal(1)
    } finally {
      await server.close()
    }
    expect(existsSync(privateFolder)).to.equal(false)
  })
})
