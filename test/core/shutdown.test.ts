import { expect } from 'chai'
import { ShutdownTimeoutError, shutDownWithin } from '../../core/shutdown.ts'

describe('shutDownWithin', () => {
  it('runs the phases in order and resolves when they all finish in time', async () => {
    const ran: string[] = []
    await shutDownWithin(1_000, [
      ['first', async () => ran.push('first')],
      ['second', () => ran.push('second')],
    ])
    expect(ran).to.deep.equal(['first', 'second'])
  })

  it('gives up on a phase that never ends, naming it, once the budget is spent', async () => {
    const ran: string[] = []
    const started = performance.now()
    const error = await shutDownWithin(200, [
      ['quick', () => ran.push('quick')],
      ['closing the database', () => new Promise(() => undefined)],
      ['after', () => ran.push('after')],
    ]).then(
      () => undefined,
      (e: unknown) => e,
    )
    const tookMs = performance.now() - started
    expect(error).to.be.instanceOf(ShutdownTimeoutError)
    expect((error as Error).message).to.equal(
      'shutdown did not finish within 200 ms (server.shutdownTimeoutMs): closing the database was still pending',
    )
    expect(ran).to.deep.equal(['quick'])
    expect(tookMs).to.be.within(190, 2_000)
  })

  it('passes on the error of a phase that fails', async () => {
    const error = await shutDownWithin(1_000, [['teardown', () => Promise.reject(new Error('boom'))]]).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((error as Error).message).to.equal('boom')
  })
})
