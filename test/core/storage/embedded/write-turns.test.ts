import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import { testDbName, testMongoUrl } from '../../../helpers/mongo.ts'
import { WriteTurns } from '../../../../core/storage/embedded/write-turns.ts'

describe('embedded MongoDB write turns', function () {
  this.timeout(60_000)
  let client: MongoClient
  const dbName = testDbName('turns')

  before(async () => {
    client = await MongoClient.connect(await testMongoUrl(), { maxPoolSize: 10 })
  })

  after(async () => {
    await client?.db(dbName).dropDatabase()
    await client?.close()
  })

  it('applies and answers concurrent writes and a read of other connections', async () => {
    const db = client.db(dbName)
    const big = db.collection('big')
    await big.insertMany(Array.from({ length: 40_000 }, (_, i) => ({ a: i, b: `value ${i}` })))
    await db.collection('small').insertOne({ _id: 1 as never, ok: true })
    // one open connection per command below, so that none waits for a connection handshake
    await Promise.all(Array.from({ length: 8 }, () => db.command({ ping: 1 })))
    const finished: string[] = []
    const updates = [0, 1, 2, 3].map((n) =>
      big.updateMany({}, { $inc: { a: 1 }, $set: { [`by${n}`]: true } }).then(() => finished.push(`update ${n}`)),
    )
    const read = updates[0]!
      .then(() => db.collection('small').findOne({ _id: 1 as never }))
      .then((doc) => finished.push(`find ${String(doc?.ok)}`))
    await Promise.all([...updates, read])
    // every write applied once and answered, and the read too (the order is WriteTurns' test below:
    // over the wire it depends on when each command arrives)
    expect(await big.countDocuments({ by0: true, by1: true, by2: true, by3: true, a: { $gte: 4 } })).to.equal(40_000)
    expect(finished).to.have.members(['update 0', 'update 1', 'update 2', 'update 3', 'find true'])
  })
})

describe('WriteTurns', () => {
  /** A write that keeps the thread busy for `ms`, as the store applying a large command does. */
  async function write(
    turns: WriteTurns,
    name: string,
    ms: number,
    order: string[],
    onStart?: () => void,
  ): Promise<void> {
    await turns.next()
    onStart?.()
    const until = performance.now() + ms
    while (performance.now() < until) {
      // busy: the server applies a command synchronously
    }
    order.push(name)
    turns.done()
  }

  it('lets what arrived during a long write run before the next queued write', async () => {
    const turns = new WriteTurns()
    const order: string[] = []
    let read!: Promise<void>
    // the read "arrives" while the first write runs: a timer, as a socket's data would, runs in a later phase of the loop
    const onFirst = () => (read = new Promise((resolve) => setTimeout(() => resolve(void order.push('read')), 0)))
    await Promise.all([
      write(turns, 'w1', 5, order, onFirst),
      write(turns, 'w2', 5, order),
      write(turns, 'w3', 5, order),
    ])
    await read
    expect(order).to.deep.equal(['w1', 'read', 'w2', 'w3'])
  })

  it('runs quick writes many to a turn', async () => {
    const turns = new WriteTurns()
    const order: string[] = []
    let read!: Promise<void>
    const onFirst = () => (read = new Promise((resolve) => setTimeout(() => resolve(void order.push('read')), 0)))
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => write(turns, `w${i}`, 0, order, i === 0 ? onFirst : undefined)),
    )
    await read
    // all twenty fit in one 1 ms turn on an idle machine; a preempted thread may end the turn early
    expect(order.indexOf('read'), order.join(', ')).to.be.at.least(10)
  })
})
