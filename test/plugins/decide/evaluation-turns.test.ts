import { expect } from 'chai'
import { EvaluationTurns } from '../../../plugins/decide/evaluation-turns.ts'

/** Slices no ordinary test reaches. */
const SLICES = { sliceMs: 10_000, clock: () => performance.now() }

describe('decide EvaluationTurns', () => {
  it('evaluates the requests of a turn one after another before any is answered, in order', async () => {
    const turns = new EvaluationTurns(SLICES)
    const events: string[] = []
    const requests = [1, 2, 3].map((n) =>
      turns
        .run(async () => {
          events.push(`evaluate ${n}`)
          return n * 10
        })
        .then((value) => {
          events.push(`answer ${n}: ${value}`)
        }),
    )
    events.push('read')
    await Promise.all(requests)
    expect(events).to.deep.equal([
      'read',
      'evaluate 1',
      'evaluate 2',
      'evaluate 3',
      'answer 1: 10',
      'answer 2: 20',
      'answer 3: 30',
    ])
  })

  it('fails only the request whose evaluation throws or rejects', async () => {
    const turns = new EvaluationTurns(SLICES)
    const thrown = turns.run((): Promise<number> => {
      throw new Error('thrown')
    })
    const rejected = turns.run(() => Promise.reject(new Error('rejected')))
    const fine = turns.run(async () => 'fine')
    const settled = await Promise.allSettled([thrown, rejected, fine])
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).to.deep.equal([
      'thrown',
      'rejected',
      'fine',
    ])
  })

  it('evaluates a request queued while a turn is answered in the next turn', async () => {
    const turns = new EvaluationTurns(SLICES)
    const events: string[] = []
    await turns
      .run(async () => events.push('first'))
      .then(() => {
        const later = turns.run(async () => events.push('second'))
        events.push('answered first')
        return later
      })
    expect(events).to.deep.equal(['first', 'answered first', 'second'])
  })

  it('lets a request that pauses go on while the others of its turn are answered', async () => {
    const turns = new EvaluationTurns(SLICES)
    const events: string[] = []
    const slow = turns.run(async () => {
      events.push('slow: first slice')
      await new Promise((resolve) => setImmediate(resolve))
      events.push('slow: second slice')
    })
    const quick = turns.run(async () => events.push('quick')).then(() => events.push('quick answered'))
    await Promise.all([slow, quick])
    expect(events).to.deep.equal(['slow: first slice', 'quick', 'quick answered', 'slow: second slice'])
  })

  it('evaluates a burst a slice at a time: the rest waits for the next turn, after the answers made so far', async () => {
    let now = 0
    // each evaluation takes 6 ms of this clock: two fit in a 10 ms slice
    const turns = new EvaluationTurns({ sliceMs: 10, clock: () => now })
    const events: string[] = []
    const burst = [1, 2, 3, 4, 5].map((n) =>
      turns
        .run(async () => {
          now += 6
          events.push(`evaluate ${n}`)
        })
        .then(() => events.push(`answer ${n}`)),
    )
    await Promise.all(burst)
    expect(events).to.deep.equal([
      'evaluate 1',
      'evaluate 2',
      'answer 1',
      'answer 2',
      'evaluate 3',
      'evaluate 4',
      'answer 3',
      'answer 4',
      'evaluate 5',
      'answer 5',
    ])
  })
})
