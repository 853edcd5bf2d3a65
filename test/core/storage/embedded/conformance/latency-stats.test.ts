import { expect } from 'chai'
import type { Document } from 'mongodb'
import { rejection, useTestDb, type Loose } from './fixture.ts'

/** MongoDB's histogram bucket lower bounds (µs), from operation_latency_histogram.cpp. */
const MONGODB_BUCKETS = [
  0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536,
  98304, 131072, 196608, 262144, 393216, 524288, 786432, 1048576, 1572864, 2097152, 4194304, 8388608, 16777216,
  33554432, 67108864, 134217728, 268435456, 536870912, 1073741824, 2147483648, 4294967296, 8589934592, 17179869184,
  34359738368, 68719476736, 137438953472, 274877906944, 549755813888, 1099511627776,
]
const KINDS = ['reads', 'writes', 'commands', 'transactions']

interface Latency {
  latency: number
  ops: number
  histogram?: Array<{ micros: number; count: number }>
}

/** Checks one {latency, ops[, histogram]} document and returns it with plain numbers. */
function latencyOf(doc: Document, histograms: boolean): Latency {
  const latency = Number(doc.latency)
  const ops = Number(doc.ops)
  expect(latency).to.be.at.least(0)
  expect(ops).to.be.at.least(0)
  if (!histograms) {
    expect(doc).to.not.have.property('histogram')
    return { latency, ops }
  }
  const histogram = (doc.histogram as Document[]).map((h) => ({ micros: Number(h.micros), count: Number(h.count) }))
  for (const { micros, count } of histogram) {
    expect(MONGODB_BUCKETS, `bucket ${micros}`).to.include(micros)
    expect(count).to.be.above(0) // empty buckets are left out
  }
  expect(histogram.map((h) => h.micros)).to.deep.equal([...histogram.map((h) => h.micros)].sort((a, b) => a - b))
  expect(histogram.reduce((sum, h) => sum + h.count, 0)).to.equal(ops)
  return { latency, ops, histogram }
}

function kindsOf(doc: Document, histograms: boolean): Record<string, Latency> {
  for (const kind of ['reads', 'writes', 'commands']) expect(doc, kind).to.have.property(kind)
  return Object.fromEntries(KINDS.filter((k) => doc[k]).map((k) => [k, latencyOf(doc[k], histograms)]))
}

describe('MongoDB conformance: serverStatus opLatencies', () => {
  const t = useTestDb('op_latencies')
  const status = async (histograms: boolean) =>
    kindsOf(
      (await t.db.admin().command({ serverStatus: 1, opLatencies: { histograms } })).opLatencies as Document,
      histograms,
    )

  it('counts reads, writes and commands server-wide, with time and MongoDB-bucketed histograms', async () => {
    const before = await status(false)
    const coll = t.db.collection<Loose>('timed')
    await coll.insertOne({ a: 1 })
    await coll.insertOne({ a: 2 })
    expect(await coll.findOne({ a: 2 })).to.include({ a: 2 })
    await t.db.command({ ping: 1 })
    const after = await status(true)
    expect(after.reads.ops - before.reads.ops).to.be.at.least(1)
    expect(after.writes.ops - before.writes.ops).to.be.at.least(2)
    // the serverStatus that read `before` counts among the commands, and the ping
    expect(after.commands.ops - before.commands.ops).to.be.at.least(2)
    expect(after.writes.latency).to.be.above(before.writes.latency)
    expect(after.reads.latency).to.be.above(before.reads.latency)
  })
})

describe('MongoDB conformance: $collStats latencyStats', () => {
  const t = useTestDb('coll_latency')
  const stats = async (name: string, histograms: boolean) => {
    const [doc] = await t.db
      .collection(name)
      .aggregate([{ $collStats: { latencyStats: { histograms } } }])
      .toArray()
    expect(doc.ns).to.equal(`${t.db.databaseName}.${name}`)
    return kindsOf(doc.latencyStats as Document, histograms)
  }

  it('puts a find in reads and an insert in writes of its collection, with a histogram of each', async () => {
    const coll = t.db.collection<Loose>('mixed')
    await coll.insertOne({ _id: 1, a: 1 })
    await coll.insertOne({ _id: 2, a: 2 })
    for (const id of [1, 2, 1]) expect(await coll.findOne({ _id: id })).to.include({ _id: id })
    const first = await stats('mixed', true)
    expect(first.reads.ops).to.equal(3)
    expect(first.writes.ops).to.equal(2)
    expect(first.reads.latency).to.be.above(0)
    expect(first.writes.latency).to.be.above(0)
    // each operation's microseconds fall in the bucket it is counted in or above its lower bound
    const floor = first.reads.histogram!.reduce((sum, h) => sum + h.micros * h.count, 0)
    expect(first.reads.latency).to.be.at.least(floor)

    await coll.updateOne({ _id: 1 }, { $set: { b: 1 } })
    const second = await stats('mixed', false)
    expect(second.writes.ops).to.equal(3)
    // the first $collStats aggregate may count among the reads, as it does on MongoDB
    expect(second.reads.ops).to.be.within(3, 4)
  })

  it('keeps each collection apart and starts a dropped collection again from zero', async () => {
    const a = t.db.collection<Loose>('apart_a')
    const b = t.db.collection<Loose>('apart_b')
    await a.insertMany([{ x: 1 }, { x: 2 }])
    await b.insertOne({ x: 1 })
    await a.findOne({ x: 1 })
    expect((await stats('apart_b', false)).reads.ops).to.equal(0)
    expect((await stats('apart_a', false)).reads.ops).to.equal(1)
    await a.drop()
    await a.insertOne({ x: 3 })
    expect((await stats('apart_a', false)).writes.ops).to.equal(1)
  })

  it('runs the rest of the pipeline on its document and refuses $collStats after the first stage', async () => {
    const coll = t.db.collection<Loose>('piped')
    await coll.insertOne({ a: 1 })
    const [doc] = await coll
      .aggregate([{ $collStats: { latencyStats: {}, count: {} } }, { $project: { _id: 0, count: 1, ns: 1 } }])
      .toArray()
    expect(doc).to.deep.equal({ ns: `${t.db.databaseName}.piped`, count: 1 })
    const error = await rejection(coll.aggregate([{ $match: {} }, { $collStats: { latencyStats: {} } }]).toArray())
    expect(error.code).to.equal(40602)
  })
})
