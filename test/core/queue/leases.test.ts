import { expect } from 'chai'
import type { NatsConnection } from 'nats'
import { pino } from 'pino'
import { NatsServer } from '../../helpers/nats-server.ts'
import { requireTool } from '../../helpers/requires.ts'
import { PartitionLeases } from '../../../core/queue/leases.ts'

const logger = pino({ level: 'silent' })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('partition leases', function () {
  this.timeout(30_000)
  const nats = new NatsServer()
  requireTool('nats-server')
  let nc: NatsConnection
  let bucket = 0
  const running: PartitionLeases[] = []
  before(async () => {
    await nats.start()
    nc = await nats.connect()
  })
  afterEach(async () => {
    for (const l of running.splice(0)) await l.stop()
  })
  after(async () => {
    await nc?.close()
    await nats.close()
  })

  async function buckets(ttlMs: number) {
    const name = `L${++bucket}`
    const js = nc.jetstream()
    return {
      leases: await js.views.kv(`${name}_leases`, { history: 1 }),
      members: await js.views.kv(`${name}_members`, { ttl: ttlMs, history: 1 }),
    }
  }

  /** A lease set whose holder records when each partition started and stopped. */
  function worker(workerId: string, kv: Awaited<ReturnType<typeof buckets>>, ttlMs: number, partitions = 4) {
    const started = new Map<number, number>()
    const stopped: number[] = []
    const leases = new PartitionLeases({
      ...kv,
      workerId,
      partitions,
      ttlMs,
      logger,
      holder: { gained: (p) => started.set(p, Date.now()), lost: async (p) => void stopped.push(p) },
    })
    running.push(leases)
    return { leases, started, stopped }
  }

  it('takes every partition that nobody ever held, at once', async () => {
    const kv = await buckets(1000)
    const a = worker('a', kv, 1000)
    const before = Date.now()
    await a.leases.start()
    expect(a.leases.partitions).to.deep.equal([0, 1, 2, 3])
    expect(Math.max(...a.started.values()) - before).to.be.below(500)
    expect(a.leases.mayRun(2)).to.equal(true)
  })

  it('splits the partitions with a second worker, which gets the handed-back ones without waiting', async () => {
    const kv = await buckets(900)
    const a = worker('a', kv, 900)
    await a.leases.start()
    const b = worker('b', kv, 900)
    await b.leases.start()
    for (let i = 0; i < 40 && b.leases.partitions.length < 2; i++) await sleep(100)
    expect(a.leases.partitions).to.have.length(2)
    expect(b.leases.partitions).to.have.length(2)
    expect([...a.leases.partitions, ...b.leases.partitions].sort()).to.deep.equal([0, 1, 2, 3])
    expect(a.stopped.sort()).to.deep.equal(b.leases.partitions)
    await a.leases.stop()
    running.splice(running.indexOf(a.leases), 1)
    for (let i = 0; i < 40 && b.leases.partitions.length < 4; i++) await sleep(100)
    expect(b.leases.partitions).to.deep.equal([0, 1, 2, 3])
    expect(b.started.size).to.equal(4)
  })

  it('consumes the partitions of a worker that vanished only after its membership expired and one more TTL', async () => {
    const ttl = 1000
    const kv = await buckets(ttl)
    await kv.members.put('ghost', '1')
    for (let p = 0; p < 4; p++) await kv.leases.put(`p${p}`, 'ghost')
    const ghostLastSeen = Date.now()
    const a = worker('a', kv, ttl)
    await a.leases.start()
    expect(a.leases.partitions, 'the ghost is still a member').to.deep.equal([])
    for (let i = 0; i < 60 && a.started.size < 4; i++) await sleep(100)
    expect(a.started.size).to.equal(4)
    expect(Math.min(...a.started.values()) - ghostLastSeen).to.be.at.least(2 * ttl)
  })

  it('stops consuming a partition another worker took over', async () => {
    const kv = await buckets(1000)
    const a = worker('a', kv, 1000, 1)
    await a.leases.start()
    await kv.members.put('usurper', '1')
    const entry = await kv.leases.get('p0')
    await kv.leases.update('p0', 'usurper', entry!.revision)
    for (let i = 0; i < 30 && a.stopped.length === 0; i++) await sleep(100)
    expect(a.stopped).to.deep.equal([0])
    expect(a.leases.mayRun(0)).to.equal(false)
  })
})
