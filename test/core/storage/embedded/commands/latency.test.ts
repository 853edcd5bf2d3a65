import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, type Document } from 'mongodb'
import {
  bucketOf,
  LATENCY_BUCKETS,
  opLatencies,
  recordLatency,
} from '../../../../../core/storage/embedded/commands/latency.ts'
import { startEmbeddedMongo } from '../../../../../core/storage/embedded/index.ts'

describe('embedded MongoDB operation latencies', function () {
  this.timeout(120_000)

  it("buckets latencies as MongoDB's _getBucket does, half steps from 2048 µs to 2^21 µs", () => {
    expect(LATENCY_BUCKETS).to.have.length(51)
    const cases: Array<[number, number]> = [
      [0, 0],
      [1, 0],
      [2, 2],
      [3, 2],
      [1023, 512],
      [1024, 1024],
      [2047, 1024],
      [2048, 2048],
      [3071, 2048],
      [3072, 3072],
      [4095, 3072],
      [1_048_576, 1_048_576],
      [1_572_863, 1_048_576],
      [1_572_864, 1_572_864],
      [2_097_151, 1_572_864],
      [2_097_152, 2_097_152],
      [4_194_303, 2_097_152],
      [2 ** 45, 2 ** 40],
    ]
    for (const [micros, lower] of cases) expect(LATENCY_BUCKETS[bucketOf(micros)], `${micros} µs`).to.equal(lower)
  })

  it('counts a malformed command by its name without reading past its bytes', () => {
    /** An OP_MSG whose body is `{find: <a string of length `length`>}` followed by `tail`. */
    const frame = (length: number, tail: number[]) => {
      const body = Buffer.from([0, 0, 0, 0, 0x02, ...Buffer.from('find\0'), 0, 0, 0, 0, ...tail])
      body.writeInt32LE(body.length + 1, 0)
      body.writeInt32LE(length, 10)
      const header = Buffer.alloc(21)
      header.writeInt32LE(21 + body.length + 1, 0)
      header.writeInt32LE(2013, 12)
      return Buffer.concat([header, body, Buffer.from([0])])
    }
    const reads = () => Number((opLatencies(false).reads as { ops: unknown }).ops)
    const before = reads()
    recordLatency(frame(-40, [0x61, 0]), 10) // a negative length would walk backwards
    recordLatency(frame(1_000_000, [0x61, 0]), 10) // past the end of the frame
    recordLatency(frame(2, [0x61, 0]).subarray(0, 33), 10) // cut short in the string's length
    expect(reads() - before).to.equal(3)
  })

  describe('with two reader threads beside the writer', () => {
    let dataDir: string
    let client: MongoClient
    let close: () => Promise<void>

    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-latency-'))
      const server = await startEmbeddedMongo({ dataDir, readers: 2, engine: 'lmdb', syncIntervalMs: 60_000 })
      client = await MongoClient.connect(server.url)
      close = async () => {
        await client.close()
        await server.close()
      }
    })

    after(async () => {
      await close?.()
      rmSync(dataDir, { recursive: true, force: true })
    })

    const serverStatus = async () =>
      (await client.db('admin').command({ serverStatus: 1, opLatencies: { histograms: true } })).opLatencies as Document
    const latencyStats = async (name: string) =>
      (
        await client
          .db('lat')
          .collection(name)
          .aggregate([{ $collStats: { latencyStats: { histograms: true } } }])
          .toArray()
      )[0].latencyStats as Document

    it('counts the reads every thread answers and the writes the writer thread answers, read from any thread', async () => {
      const coll = client.db('lat').collection('threads')
      await coll.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: i as never, i })))
      const before = await serverStatus()
      // taken in turn by the two readers: this thread's read view and the other reader thread
      for (let i = 0; i < 4; i++) expect(await coll.findOne({ _id: i as never })).to.include({ i })
      // a find and its two getMores: reads of the collection too
      expect(await coll.find({}, { batchSize: 2 }).toArray()).to.have.length(5)
      const after = await serverStatus()
      expect(Number(after.reads.ops) - Number(before.reads.ops)).to.equal(7)
      // serverStatus ran on the writer thread, $collStats on a reader: both see every thread's reads
      const stats = await latencyStats('threads')
      expect(Number(stats.reads.ops)).to.equal(7)
      expect(Number(stats.writes.ops)).to.equal(1)
      expect(Number(stats.commands.ops)).to.equal(0)
    })

    it("times writes on the writer thread from the message's arrival to the reply", async () => {
      const coll = client.db('lat').collection('long_write')
      let roundTrips = 0
      const timed = async (write: () => Promise<unknown>) => {
        const started = performance.now()
        await write()
        roundTrips += (performance.now() - started) * 1000
      }
      await timed(() => coll.insertMany(Array.from({ length: 20_000 }, (_, i) => ({ i, pad: 'x'.repeat(100) }))))
      await timed(() => coll.updateMany({}, { $inc: { i: 1 } }))
      const { writes } = await latencyStats('long_write')
      expect(Number(writes.ops)).to.equal(2)
      // milliseconds each: nearly all of the round trips is the server's (a socket hop is ~0.1 ms)
      expect(Number(writes.latency)).to.be.within(roundTrips / 2, roundTrips)
      expect(Number((writes.histogram as Document[]).at(-1)!.micros)).to.be.at.least(1024)
    })
  })
})
