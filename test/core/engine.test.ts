import { expect } from 'chai'
import Router from '@koa/router'
import { PHASES } from '../../core/hooks.ts'
import { Stage } from '../../core/plugin-api.ts'
import type { SinkBatch } from '../../core/plugin-api.ts'
import { hooksWithOwner, sampleContext, sampleEvent } from '../helpers/hooks.ts'

const batch = (): SinkBatch => ({
  project: sampleContext().project,
  events: [sampleEvent()],
  receivedAt: new Date(0),
  historicalMigration: false,
})

describe('Engine', () => {
  it('resolves the order of every tap once: each hook of the table, in table order, with its taps by stage then registration', () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('spike', () => hooks.validate.tap({ name: 'x', stage: Stage.afterStep }, () => undefined))
    as('groups', () => {
      hooks.validate.tap({ name: 'x', stage: Stage.afterStep }, () => undefined)
      hooks.aliasResolve.tap({ name: 'x', stage: Stage.beforeStep }, () => undefined)
      hooks.routes.tap({ name: 'x' }, () => undefined)
    })
    as('validate', () => hooks.validate.tap({ name: 'x' }, () => undefined))
    as('persons', () => hooks.aliasResolve.tapPromise({ name: 'x' }, async () => undefined))
    as('store', () => hooks.sink.tapPromise({ name: 'x' }, async () => undefined))
    const { order } = engine()
    expect(Object.keys(order)).to.deep.equal(PHASES.map((p) => p.hook))
    expect(order).to.deep.include({
      routes: ['groups'],
      validate: ['validate', 'spike', 'groups'],
      aliasResolve: ['groups', 'persons'],
      geoip: [],
      sink: ['store'],
      stepFailed: ['failure-recorder'],
    })
  })

  it('is built once: a tap list changed afterwards does not change what it runs', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('a', () => hooks.geoip.tap({ name: 'x' }, (e) => ({ ...e, event: 'from-a' })))
    const built = engine()
    hooks.geoip.taps = []
    expect((await built.runEvent(sampleEvent(), sampleContext())).value).to.include({ event: 'from-a' })
  })

  it('refuses to run a tap that no plugin made (pushed into a tap list by hand)', () => {
    const { hooks, engine } = hooksWithOwner()
    hooks.geoip.taps.push({ name: 'stowaway', type: 'sync', fn: () => undefined })
    expect(() => engine()).to.throw(/tap on geoip has no plugin/)
  })

  it('runs the ready taps one after another, and a failing one fails boot', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const seen: string[] = []
    as('slow', () =>
      hooks.ready.tapPromise({ name: 'x' }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        seen.push('slow')
      }),
    )
    as('cb', () => hooks.ready.tapAsync({ name: 'x' }, (done) => void (seen.push('cb'), done())))
    await engine().ready()
    expect(seen).to.deep.equal(['slow', 'cb'])
    as('broken', () =>
      hooks.ready.tap({ name: 'x' }, () => {
        throw new Error('cannot start')
      }),
    )
    const error = await engine()
      .ready()
      .catch((e: unknown) => e)
    expect(error).to.have.property('message', 'cannot start')
  })

  it('mounts each plugin’s routes, and a throw fails boot', () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('routes', () => hooks.routes.tap({ name: 'x' }, (router) => void router.get('/mine', () => undefined)))
    const router = new Router()
    engine().mountRoutes(router)
    expect(router.stack.map((layer) => layer.path)).to.deep.equal(['/mine'])
    as('broken', () =>
      hooks.routes.tap({ name: 'x' }, () => {
        throw new Error('bad route')
      }),
    )
    expect(() => engine().mountRoutes(new Router())).to.throw('bad route')
  })

  it('times a sink out after stepTimeoutMs, as a retryable failure of that sink alone', async () => {
    const { hooks, as, engine, failures } = hooksWithOwner(40)
    as('hung', () => hooks.sink.tapPromise({ name: 'x' }, () => new Promise(() => undefined)), true)
    as('fine', () => hooks.sink.tapPromise({ name: 'x' }, async () => undefined))
    const outcomes = await engine().runSinks(batch())
    expect(outcomes.map((o) => [o.plugin, o.required, o.error?.message])).to.deep.equal([
      ['fine', false, undefined],
      ['hung', true, 'hung in sink timed out after 40 ms'],
    ])
    expect(failures.map((f) => [f.plugin, f.hook, f.retryable])).to.deep.equal([['hung', 'sink', true]])
  })

  it('tells interceptors that observe calls of every sink and observer call', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('store', () => hooks.sink.tapPromise({ name: 'x' }, async () => undefined))
    as('watch', () => hooks.eventDropped.tap({ name: 'x' }, () => undefined))
    const seen: string[] = []
    hooks.sink.intercept({
      call: () => void seen.push('sink call'),
      tap: (tap) => void seen.push(`sink tap ${tap.name}`),
    })
    hooks.eventDropped.intercept({
      call: (dropped) => void seen.push(`dropped ${(dropped as { reason: string }).reason}`),
    })
    const built = engine()
    await built.runSinks(batch())
    built.eventDropped({ dropped: true, reason: 'nope' }, sampleContext())
    expect(seen).to.deep.equal(['sink call', 'sink tap store', 'dropped nope'])
  })
})
