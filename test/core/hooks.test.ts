import { expect } from 'chai'
import { AsyncParallelHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable'
import { PHASES, STEPS, tapOnly } from '../../core/hooks.ts'
import { Stage, drop, isDropped } from '../../core/plugin-api.ts'
import type { IngestEvent } from '../../core/plugin-api.ts'
import { hooksWithOwner, sampleContext, sampleEvent } from '../helpers/hooks.ts'

describe('hooks', () => {
  it('declares the steps in pipeline order: validate → geoip → alias-resolve → person-update → group-update → flag-attribution', () => {
    expect(STEPS.map((s) => s.hook)).to.deep.equal([
      'validate',
      'geoip',
      'aliasResolve',
      'personUpdate',
      'groupUpdate',
      'flagAttribution',
    ])
  })

  it('is frozen: no hook can be added or replaced at runtime', () => {
    const { hooks } = hooksWithOwner()
    expect(Object.isFrozen(hooks)).to.equal(true)
    expect(() => Object.assign(hooks, { extra: 1 })).to.throw(TypeError)
  })

  it('gives each hook its name, for tapable error messages', () => {
    const { hooks } = hooksWithOwner()
    expect(hooks.aliasResolve.name).to.equal('aliasResolve')
    expect(hooks.sink.name).to.equal('sink')
  })

  it('builds every hook from the phase table, once each, with its tapable class', () => {
    const { hooks } = hooksWithOwner()
    expect(PHASES.map((p) => p.hook)).to.have.members(Object.keys(hooks))
    expect(new Set(PHASES.map((p) => p.hook)).size).to.equal(PHASES.length)
    const classes: Record<string, new (args: never, name: string) => object> = {
      SyncHook,
      AsyncSeriesHook,
      AsyncSeriesWaterfallHook,
      AsyncParallelHook,
    }
    type Compiled = { compile: unknown }
    for (const { hook, tapable, args } of PHASES) {
      // tapable's classes are factories (a hook's `constructor` is their common base): its class shows in the `compile` it was given
      const expected = new classes[tapable]!([...args] as never, hook) as Compiled
      expect((hooks[hook] as unknown as Compiled).compile, hook).to.equal(expected.compile)
    }
    expect(() => (hooks.stepFailed as unknown as AsyncSeriesHook<[]>).tapPromise('x', async () => undefined)).to.throw(
      /not supported/,
    )
  })

  it('hands plugins tap-only views: tap methods bound to the real hooks, nothing that runs, intercepts or edits them', () => {
    const { hooks, as } = hooksWithOwner()
    const views = tapOnly(hooks)
    expect(Object.keys(views)).to.deep.equal(PHASES.map((p) => p.hook))
    expect(Object.keys(views.validate)).to.deep.equal(['tap', 'tapAsync', 'tapPromise'])
    expect(Object.keys(views.sink)).to.deep.equal(['tap', 'tapAsync', 'tapPromise'])
    expect(Object.keys(views.routes)).to.deep.equal(['tap'])
    expect(Object.keys(views.stepFailed)).to.deep.equal(['tap'])
    for (const view of Object.values(views)) {
      expect(view).not.to.have.any.keys('call', 'callAsync', 'promise', 'intercept', 'taps')
      expect(Object.isFrozen(view)).to.equal(true)
    }
    as('through-view', () => views.validate.tapPromise({ name: 'x' }, async () => undefined))
    expect(hooks.validate.taps.map((t) => t.name)).to.deep.equal(['through-view'])
    expect(() => views.geoip.tap({ name: 'rogue' }, () => undefined)).to.throw(/outside a plugin's setup/)
  })

  it('runs taps by their Stage, then in registration (config) order', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const mark = (name: string) => (e: IngestEvent) => ({
      ...e,
      properties: { ...e.properties, seen: [...((e.properties.seen as string[]) ?? []), name] },
    })
    as('late', () => hooks.validate.tap({ name: 'x', stage: Stage.afterStep }, mark('late')))
    as('own', () => hooks.validate.tap({ name: 'x' }, mark('own')))
    as('early', () => hooks.validate.tap({ name: 'x', stage: Stage.beforeStep }, mark('early')))
    as('own-too', () => hooks.validate.tap({ name: 'x', stage: Stage.step }, mark('own-too')))
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect((value as IngestEvent).properties.seen).to.deep.equal(['early', 'own', 'own-too', 'late'])
    expect(engine().order.validate).to.deep.equal(['early', 'own', 'own-too', 'late'])
  })

  it('validate fails the event on a throw (policy fail)', async () => {
    const { hooks, as, failures, engine } = hooksWithOwner()
    as('v', () => hooks.validate.tapPromise({ name: 'v' }, async () => Promise.reject(new Error('bad'))))
    const error = await engine()
      .runEvent(sampleEvent(), sampleContext())
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).to.have.property('name', 'StepError')
    expect(error).to.include({ plugin: 'v', hook: 'validate', retryable: false })
    expect(failures).to.have.length(1)
  })

  for (const hook of ['geoip', 'flagAttribution'] as const) {
    it(`${hook} skips a failing tap and keeps the event (policy skip)`, async () => {
      const { hooks, as, engine } = hooksWithOwner()
      as('bad', () => hooks[hook].tapPromise({ name: 'bad' }, async () => Promise.reject(new Error('lookup failed'))))
      as('good', () =>
        hooks[hook].tapPromise({ name: 'good' }, async (event) => ({ ...event, properties: { after: true } })),
      )
      const { value: result } = await engine().runEvent(sampleEvent(), sampleContext())
      expect(result).to.deep.include({ properties: { after: true } })
    })
  }

  for (const hook of ['aliasResolve', 'personUpdate', 'groupUpdate'] as const) {
    it(`${hook} fails the request with a retryable error when the database is unreachable (policy fail)`, async () => {
      const { hooks, as, engine } = hooksWithOwner()
      const networkError = Object.assign(new Error('connection refused'), { name: 'MongoNetworkError' })
      as('persons', () => hooks[hook].tapPromise({ name: 'persons' }, async () => Promise.reject(networkError)))
      const error = await engine()
        .runEvent(sampleEvent(), sampleContext())
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(error).to.include({ retryable: true, hook })
    })
  }

  it('a dropped event short-circuits the remaining taps of the hook', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    let laterCalled = false
    as('a', () => hooks.validate.tapPromise({ name: 'a' }, async () => drop('nope')))
    as('b', () => hooks.validate.tapPromise({ name: 'b' }, async () => void (laterCalled = true)))
    const { value: result } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(isDropped(result)).to.equal(true)
    expect(laterCalled).to.equal(false)
  })

  it('undefined from a step keeps the previous value', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('a', () => hooks.geoip.tapPromise({ name: 'a' }, async (e) => ({ ...e, event: 'changed' })))
    as('b', () => hooks.geoip.tapPromise({ name: 'b' }, async () => undefined))
    expect((await engine().runEvent(sampleEvent(), sampleContext())).value).to.include({ event: 'changed' })
  })

  it('a step that hangs past stepTimeoutMs fails with a retryable error', async () => {
    const { hooks, as, engine } = hooksWithOwner(50)
    as('slow', () => hooks.personUpdate.tapPromise({ name: 'slow' }, () => new Promise(() => undefined)))
    const error = await engine()
      .runEvent(sampleEvent(), sampleContext())
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).to.include({ retryable: true })
  })
})
