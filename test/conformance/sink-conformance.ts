/**
 * The sink conformance suite (models.md §5.6, Vector's validation harness): one mocha `describe`
 * that any sink plugin, built-in or third-party, runs against itself. Call it at the top level of a
 * test file; it starts the real service around the sink and closes everything it started.
 */
import { expect } from 'chai'
import { API_VERSION } from '../../core/plugin-api.ts'
import type { IngestEvent, PluginDefinition, SinkBatch } from '../../core/plugin-api.ts'
import { checkSchema, ConfigError } from '../../core/config.ts'
import { deepFreeze, wireEvents } from './events.ts'
import type { StoredEvent } from './events.ts'
import { PROBE, startHarness, SuiteResources } from './harness.ts'
import type { Harness, ProbeRecord } from './harness.ts'

/** The instance the suite is about to start, so options can differ (a new file, stream, URL). */
export interface SinkInstance {
  readonly required: boolean
}

export interface SinkConformanceSubject<O extends object = Record<string, unknown>> {
  /** The plugin definition exactly as the package exports it. */
  readonly plugin: PluginDefinition
  /** Valid options for one fresh instance; called once per service the suite starts. */
  options(instance: SinkInstance): O | Promise<O>
  /** Options the schema must refuse (besides an unknown key, which every schema must refuse). */
  readonly invalidOptions?: readonly unknown[]
  /** Everything the instance with these options has stored so far, read back from its destination. */
  read(options: O): Promise<readonly StoredEvent[]>
  /** Make this instance's destination refuse writes from now on (stop a server, delete a stream...). */
  fail(options: O): void | Promise<void>
  /** Step, setup and shutdown timeout of the service (default 5000 ms). */
  readonly timeoutMs?: number
}

function countsByUuid(events: readonly StoredEvent[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const e of events) counts.set(e.uuid, (counts.get(e.uuid) ?? 0) + 1)
  return counts
}

/** Every event the probe saw is stored exactly once, as the probe saw it, and nothing else is. */
function expectStoredOnce(stored: readonly StoredEvent[], probe: ProbeRecord): void {
  const counts = countsByUuid(stored)
  const twice = [...counts].filter(([, n]) => n > 1).map(([uuid]) => uuid)
  expect(twice, 'events stored more than once').to.deep.equal([])
  const byUuid = new Map(stored.map((e) => [e.uuid, e]))
  const missing = probe.events.filter((e) => !byUuid.has(e.uuid)).map((e) => e.uuid)
  expect(missing, 'events the sink was handed but did not store').to.deep.equal([])
  const known = new Set(probe.events.map((e) => e.uuid))
  expect(
    [...counts.keys()].filter((uuid) => !known.has(uuid)),
    'stored events nobody sent',
  ).to.deep.equal([])
  for (const sent of probe.events) expect(byUuid.get(sent.uuid), `stored event ${sent.uuid}`).to.deep.equal(sent)
}

export function sinkConformance<O extends object>(subject: SinkConformanceSubject<O>): void {
  const { plugin } = subject
  const timeoutMs = subject.timeoutMs ?? 5_000

  describe(`sink conformance: ${String(plugin?.name)}`, function () {
    this.timeout(timeoutMs * 4 + 20_000)
    const resources = new SuiteResources()
    const open: Harness[] = []
    async function start(required: boolean): Promise<{ harness: Harness; options: O }> {
      const options = await subject.options({ required })
      const harness = await startHarness(resources, { plugin, options, required, timeoutMs })
      open.push(harness)
      return { harness, options }
    }
    after(async () => {
      for (const harness of open) await harness.close()
      await resources.close()
    })

    describe('definition', () => {
      it('is an object with a string name, the current apiVersion and a setup function', () => {
        expect(plugin, 'the definition').to.be.an('object')
        expect(plugin.name).to.be.a('string').that.is.not.empty
        expect(plugin.apiVersion).to.equal(API_VERSION)
        expect(plugin.setup).to.be.a('function')
      })

      it('has an options schema that refuses an unknown key and every invalid value given', async () => {
        const valid = await subject.options({ required: true })
        if (!plugin.optionsSchema) {
          expect(valid, 'a plugin without an options schema takes no options').to.deep.equal({})
          return
        }
        expect(() => checkSchema(plugin.optionsSchema!, valid, 'valid options')).not.to.throw()
        for (const junk of [{ ...valid, 'conformance-unknown-key': true }, ...(subject.invalidOptions ?? [])]) {
          expect(() => checkSchema(plugin.optionsSchema!, junk, 'junk'), JSON.stringify(junk)).to.throw(ConfigError)
        }
      })
    })

    describe('as a required sink', () => {
      let harness: Harness
      let options: O
      before(async () => {
        ;({ harness, options } = await start(true))
      })

      it('taps the sink hook and nothing else', () => {
        const loaded = harness.service.plugins.find((p) => p.id === plugin.name)
        expect(loaded?.tapped).to.include('sink')
        expect([...new Set(loaded?.tapped)]).to.deep.equal(['sink'])
      })

      it('has stored every event of a request exactly once and completely when the request answers 200', async () => {
        expect(await harness.post(wireEvents(12, 'once'))).to.equal(200)
        expect(harness.probe.events).to.have.length(12)
        expectStoredOnce(await subject.read(options), harness.probe)
      })

      it('handles a large batch and concurrent requests', async () => {
        const requests = [
          wireEvents(300, 'large'),
          ...Array.from({ length: 8 }, (_, i) => wireEvents(25, `concurrent-${i}`)),
        ]
        const statuses = await Promise.all(requests.map((events) => harness.post(events)))
        expect(statuses).to.deep.equal(requests.map(() => 200))
        expect(harness.probe.events).to.have.length(12 + 300 + 8 * 25)
        expectStoredOnce(await subject.read(options), harness.probe)
      })

      it('does not modify the events it is handed', async () => {
        const events: IngestEvent[] = wireEvents(5, 'frozen').map((w) => ({
          uuid: w.uuid,
          event: w.event,
          distinctId: w.distinct_id,
          properties: w.properties,
          timestamp: new Date(w.timestamp),
        }))
        const batch: SinkBatch = deepFreeze({
          project: harness.project,
          events,
          receivedAt: new Date(),
          historicalMigration: false,
        })
        const before = structuredClone(batch)
        const outcomes = await harness.service.engine.runSinks(batch)
        const outcome = outcomes.find((o) => o.plugin === plugin.name)
        expect(outcome, 'the sink ran').to.exist
        expect(outcome?.error?.message, 'the sink failed on a frozen batch').to.equal(undefined)
        expect(batch).to.deep.equal(before)
        expectStoredOnce(await subject.read(options), harness.probe)
      })
    })

    describe('as an optional sink', () => {
      it('has stored everything it acknowledged once the service has shut down', async () => {
        const { harness, options } = await start(false)
        const statuses = await Promise.all([0, 1, 2].map((i) => harness.post(wireEvents(40, `teardown-${i}`))))
        expect(statuses).to.deep.equal([200, 200, 200])
        expect(harness.probe.failedSinks, 'sinks that failed with a healthy destination').to.deep.equal([])
        await harness.close()
        expectStoredOnce(await subject.read(options), harness.probe)
      })
    })

    describe('when its destination fails', () => {
      it('as an optional sink: requests still answer 200 and the other sinks get every event', async () => {
        const { harness, options } = await start(false)
        await subject.fail(options)
        // A buffering sink reports failure once its bounded buffer is full: keep sending until it does.
        let sent = 0
        for (let i = 0; i < 50 && !harness.probe.failedSinks.includes(plugin.name); i++) {
          expect(await harness.post(wireEvents(20, `optional-failing-${i}`)), `request ${i}`).to.equal(200)
          sent += 20
        }
        expect(harness.probe.failedSinks, 'the sink reported a failure').to.include(plugin.name)
        expect(harness.probe.failedSinks).not.to.include(PROBE)
        expect(harness.probe.events).to.have.length(sent)
      })

      it('as a required sink: the request answers 503 and the other sinks still get every event', async () => {
        const { harness, options } = await start(true)
        await subject.fail(options)
        expect(await harness.post(wireEvents(20, 'required-failing'))).to.equal(503)
        expect(harness.probe.failedSinks).to.include(plugin.name)
        expect(harness.probe.events).to.have.length(20)
      })
    })
  })
}
