import { expect } from 'chai'
import { STEPS } from '../../core/hooks.ts'
import { drop, isDropped } from '../../core/plugin-api.ts'
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
