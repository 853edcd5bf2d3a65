import { expect } from 'chai'
import type { SinkBatch } from '../../core/plugin-api.ts'
import { hooksWithOwner, sampleContext, sampleEvent } from '../helpers/hooks.ts'

const batch = (): SinkBatch => ({
  project: sampleContext().project,
  events: [sampleEvent()],
  receivedAt: new Date(0),
  historicalMigration: false,
})

describe('isolation', () => {
  it('turns a promise tap that throws synchronously after the first tap into a rejection, not a hang (models.md §3)', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('first', () => hooks.validate.tapPromise({ name: 'first' }, async () => undefined))
    as('sync-thrower', () =>
      hooks.validate.tapPromise({ name: 'sync-thrower' }, (() => {
        throw new Error('sync')
      }) as never),
    )
    const settled = await Promise.race([
      engine()
        .runEvent(sampleEvent(), sampleContext())
        .then(
          () => 'resolved',
          () => 'rejected',
        ),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 500)),
    ])
    expect(settled).to.equal('rejected')
  })

  it('accepts a promise tap that returns a non-promise value', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('first', () => hooks.geoip.tapPromise({ name: 'first' }, async () => undefined))
    as('plain', () => hooks.geoip.tapPromise({ name: 'plain' }, ((e: object) => ({ ...e, event: 'plain' })) as never))
    expect((await engine().runEvent(sampleEvent(), sampleContext())).value).to.include({ event: 'plain' })
  })

  it('refuses a tap made outside a plugin setup', () => {
    const { hooks } = hooksWithOwner()
    expect(() => hooks.sink.tapPromise({ name: 'rogue' }, async () => undefined)).to.throw(/outside a plugin's setup/)
  })

  it('forces the tap name to the plugin id, whatever the plugin wrote', () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('real-id', () => hooks.sink.tapPromise({ name: 'pretend' }, async () => undefined))
    expect(engine().order.sink).to.deep.equal(['real-id'])
    expect(hooks.sink.taps.map((t) => t.name)).to.deep.equal(['real-id'])
  })

  it('runs every sink even when one fails, and records each outcome with its required flag', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const seen: string[] = []
    as('broken', () => hooks.sink.tapPromise({ name: 'broken' }, async () => Promise.reject(new Error('down'))), true)
    as('sync-broken', () =>
      hooks.sink.tap({ name: 'x' }, () => {
        throw new Error('sync down')
      }),
    )
    as('fine', () => hooks.sink.tapPromise({ name: 'fine' }, async () => void seen.push('fine')))
    const b = batch()
    const recorded = await engine().runSinks(b)
    expect(seen).to.deep.equal(['fine'])
    const outcomes = recorded.map((o) => ({ plugin: o.plugin, required: o.required, failed: Boolean(o.error) }))
    expect(outcomes).to.have.deep.members([
      { plugin: 'broken', required: true, failed: true },
      { plugin: 'sync-broken', required: false, failed: true },
      { plugin: 'fine', required: false, failed: false },
    ])
  })

  it('callback-style taps (tapAsync) run too', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('cb', () =>
      hooks.geoip.tapAsync({ name: 'cb' }, (event, _ctx, done) => done(null, { ...event, event: 'from-callback' })),
    )
    expect((await engine().runEvent(sampleEvent(), sampleContext())).value).to.include({ event: 'from-callback' })
  })

  it('an observer that throws never breaks the caller', () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('obs', () =>
      hooks.stepFailed.tap({ name: 'obs' }, () => {
        throw new Error('observer bug')
      }),
    )
    expect(() =>
      engine().stepFailed({ plugin: 'p', hook: 'h', error: new Error('x'), retryable: false }),
    ).not.to.throw()
  })
})
