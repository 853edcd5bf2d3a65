import { expect } from 'chai'
import { drop } from '../../core/plugin-api.ts'
import type { IngestEvent } from '../../core/plugin-api.ts'
import { hooksWithOwner, sampleContext, sampleEvent } from '../helpers/hooks.ts'

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
const withProp = (event: IngestEvent, key: string, value: unknown): IngestEvent => ({
  ...event,
  properties: { ...event.properties, [key]: value },
})

describe('StepChain (through the engine)', () => {
  it('runs the taps of every step in order, each receiving the previous answer (waterfall)', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const seen: string[] = []
    as('v', () => hooks.validate.tapPromise({ name: 'v' }, async (e) => (seen.push('validate'), withProp(e, 'a', 1))))
    as('s', () =>
      hooks.validate.tapPromise(
        { name: 's', stage: 100 },
        async (e) => (seen.push(`spike:${String(e.properties.a)}`), undefined),
      ),
    )
    as('g', () => hooks.geoip.tap({ name: 'g' }, (e) => (seen.push('geoip'), withProp(e, 'b', 2))))
    as('f', () =>
      hooks.flagAttribution.tapPromise(
        { name: 'f' },
        async (e) => (seen.push(`flags:${String(e.properties.b)}`), withProp(e, 'c', 3)),
      ),
    )
    const { value, droppedBy } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(seen).to.deep.equal(['validate', 'spike:1', 'geoip', 'flags:2'])
    expect(value).to.deep.include({ properties: { a: 1, b: 2, c: 3 } })
    expect(droppedBy).to.equal(undefined)
  })

  it('stops at a drop, names the step, and calls no later tap', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    let later = 0
    as('v', () => hooks.validate.tapPromise({ name: 'v' }, async () => drop('nope', { why: 1 })))
    as('s', () => hooks.validate.tapPromise({ name: 's', stage: 100 }, async () => void later++))
    as('g', () => hooks.geoip.tapPromise({ name: 'g' }, async () => void later++))
    const { value, droppedBy } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(value).to.deep.equal({ dropped: true, reason: 'nope', details: { why: 1 } })
    expect(droppedBy).to.equal('validate')
    expect(later).to.equal(0)
  })

  it('passes a null answer on to the next tap of the step, and keeps the previous value when a step ends in null', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const received: unknown[] = []
    as('a', () => hooks.geoip.tapPromise({ name: 'a' }, async () => null as never))
    as('b', () => hooks.geoip.tapPromise({ name: 'b' }, async (e) => void received.push(e)))
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(received).to.deep.equal([null])
    expect(value).to.deep.equal(sampleEvent())
  })

  it('keeps the event when a tap of a skip step throws, rejects, or answers late, and reports each failure', async () => {
    const { hooks, as, failures, engine } = hooksWithOwner(40)
    as('sync-thrower', () =>
      hooks.geoip.tapPromise({ name: 'x' }, (() => {
        throw new Error('sync')
      }) as never),
    )
    as('rejecter', () => hooks.geoip.tapPromise({ name: 'x' }, async () => Promise.reject(new Error('async'))))
    let lateAnswered = false
    as('slow', () =>
      hooks.flagAttribution.tapPromise(
        { name: 'x' },
        () =>
          new Promise((resolve) =>
            setTimeout(() => {
              lateAnswered = true
              resolve({ ...sampleEvent(), event: 'late' })
            }, 120),
          ),
      ),
    )
    as('after', () => hooks.flagAttribution.tapPromise({ name: 'x' }, async (e) => withProp(e, 'after', true)))
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(value).to.deep.include({ event: 'e', properties: { after: true } })
    expect(failures.map((f) => `${f.plugin}/${f.hook}/${f.retryable}`)).to.deep.equal([
      'sync-thrower/geoip/false',
      'rejecter/geoip/false',
      'slow/flagAttribution/true',
    ])
    expect(failures[2]!.error.message).to.match(/slow in flagAttribution timed out after 40 ms/)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(lateAnswered).to.equal(true)
  })

  it('gives each tap its own deadline: taps that each answer in time never time out together', async () => {
    const { hooks, as, failures, engine } = hooksWithOwner(60)
    const slow = (ms: number) => () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))
    as('a', () => hooks.validate.tapPromise({ name: 'x' }, slow(35)))
    as('b', () => hooks.aliasResolve.tapPromise({ name: 'x' }, slow(35)))
    as('c', () => hooks.personUpdate.tapPromise({ name: 'x' }, slow(35)))
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(value).to.deep.equal(sampleEvent())
    expect(failures).to.deep.equal([])
  })

  it('rejects with the StepError of a fail step, retryable when the cause is (a timeout is)', async () => {
    const { hooks, as, engine } = hooksWithOwner(30)
    as('persons', () => hooks.aliasResolve.tapPromise({ name: 'x' }, () => new Promise(() => undefined)))
    const { error } = (await settle(engine().runEvent(sampleEvent(), sampleContext()))) as {
      error: Error & Record<string, unknown>
    }
    expect(error.name).to.equal('StepError')
    expect(error).to.include({ plugin: 'persons', hook: 'aliasResolve', retryable: true })

    const other = hooksWithOwner()
    other.as('v', () => other.hooks.validate.tapPromise({ name: 'x' }, async () => Promise.reject(new Error('bad'))))
    const failed = (await settle(other.engine().runEvent(sampleEvent(), sampleContext()))) as {
      error: Error & Record<string, unknown>
    }
    expect(failed.error).to.include({ plugin: 'v', hook: 'validate', retryable: false })
  })

  it('runs callback taps (tapAsync) and promise taps that answer a plain value', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('cb', () => hooks.geoip.tapAsync({ name: 'x' }, (event, _ctx, done) => done(null, withProp(event, 'cb', true))))
    as('plain', () =>
      hooks.personUpdate.tapPromise({ name: 'x' }, ((e: IngestEvent) => withProp(e, 'plain', true)) as never),
    )
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(value).to.deep.include({ properties: { cb: true, plain: true } })
  })

  it('calls an interceptor that observes calls, so it sees every one', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('g', () => hooks.geoip.tapPromise({ name: 'x' }, async (e) => withProp(e, 'g', true)))
    const calls: string[] = []
    hooks.geoip.intercept({ call: () => void calls.push('geoip') })
    const { value } = await engine().runEvent(sampleEvent(), sampleContext())
    expect(calls).to.deep.equal(['geoip'])
    expect(value).to.deep.include({ properties: { g: true } })
  })

  it('runs the taps left after a failed setup (the loader replaces a hook\u2019s tap list before the engine is built)', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as('keep', () => hooks.geoip.tapPromise({ name: 'x' }, async (e) => withProp(e, 'keep', true)))
    as('gone', () => hooks.geoip.tapPromise({ name: 'x' }, async (e) => withProp(e, 'gone', true)))
    expect((await engine().runEvent(sampleEvent(), sampleContext())).value).to.deep.include({
      properties: { keep: true, gone: true },
    })
    hooks.geoip.taps = hooks.geoip.taps.filter((tap) => tap.name !== 'gone')
    expect((await engine().runEvent(sampleEvent(), sampleContext())).value)
      .to.deep.include({ properties: { keep: true } })
      .and.not.have.nested.property('properties.gone')
  })
})
