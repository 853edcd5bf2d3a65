/**
 * A restart of the lmdb store must not read the data: it opens the file and reads the catalog
 * records, so it takes the same time at any size. What it read is measured as the pages of
 * data.mdb the server process has mapped in (/proc/pid/smaps), which counts every read of lmdb's
 * memory map whatever the machine's load, unlike a wall-time bound.
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, type Collection } from 'mongodb'
import { mappedBytes, startEmbeddedChild, type EmbeddedChild } from '../../../../bench/embedded-child.ts'

const KiB = 1024
const MiB = 1024 * KiB

describe('embedded lmdb store: start-up', function () {
  this.timeout(180_000)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-lmdb-startup-'))
  const dataFile = path.join(dataDir, 'lmdb', 'data.mdb')
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  let server: EmbeddedChild | undefined
  let client: MongoClient | undefined
  async function start(): Promise<{ mapped: number; items: Collection }> {
    server = await startEmbeddedChild(dataDir, 'lmdb')
    // the CLI prints its URL once the store is open and listening: start-up is over
    const mapped = mappedBytes(server.child.pid!, dataFile)
    client = await MongoClient.connect(server.url)
    return { mapped, items: client.db('startup').collection('items') }
  }

  async function stop(): Promise<void> {
    await client?.close()
    await server?.stop()
    client = undefined
    server = undefined
  }
  afterEach(stop)

  async function add(from: number, count: number): Promise<void> {
    const { items } = await start()
    await items.createIndex({ group: 1, n: 1 })
    for (let at = from; at < from + count; at += 5000) {
      await items.insertMany(
        Array.from({ length: Math.min(5000, from + count - at) }, (_, k) => ({ n: at + k, group: (at + k) % 10 })),
      )
    }
    await stop()
  }

  it('reads as much of the data file at 61,000 documents as at 1,000, and a count reads no documents', async () => {
    await add(0, 1000)
    const small = (await start()).mapped
    await stop()
    await add(1000, 60_000)
    const { mapped: large, items } = await start()

    // A walk of the collection's record-number store alone would map about 2 MiB more at this size.
    expect(large - small, `mapped at start: ${small} bytes with 1,000 documents, ${large} with 61,000`).to.be.below(
      512 * KiB,
    )
    expect(await items.estimatedDocumentCount()).to.equal(61_000)
    const afterCount = mappedBytes(server!.child.pid!, dataFile)
    expect(afterCount - large, 'mapped by a count of the whole collection').to.be.below(64 * KiB)

    // the measure sees reads: a scan maps the documents in
    expect(await items.countDocuments({ missing: { $exists: true } })).to.equal(0)
    expect(mappedBytes(server!.child.pid!, dataFile) - afterCount, 'mapped by a collection scan').to.be.above(2 * MiB)
  })
})
