import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import { pino } from 'pino'
import { Pipeline } from '../../core/pipeline.ts'
import { HttpError, tooLarge } from '../../core/errors.ts'
import type { IngestRequest } from '../../core/pipeline.ts'
import type { Project } from '../../core/plugin-api.ts'
import { hooksWithOwner, sampleContext } from '../helpers/hooks.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

const project = (id: number): Project => ({ ...sampleContext().project, id })
const request = (projectId: number, ids: string[]): IngestRequest => ({
  project: project(projectId),
  events: ids.map((id) => ({ event: 'e', distinct_id: id, properties: { $process_person_profile: false } })),
  receivedAt: new Date(),
  historicalMigration: false,
})

describe('Pipeline', () => {
  let client: MongoClient
  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
  })
  after(() => client.close())

  /** A pipeline whose step waits `slowMs` on distinct_id "slow" of project 1, recording the order steps end in. */
  function pipelineRecording(slowMs: number) {
    const { hooks, as, engine } = hooksWithOwner()
    const ended: string[] = []
    as('step', () =>
      hooks.aliasResolve.tapPromise({ name: 'step' }, async (event, ctx) => {
        if (ctx.project.id === 1 && event.distinctId === 'slow')
          await new Promise((resolve) => setTimeout(resolve, slowMs))
        ended.push(`${ctx.project.id}/${event.distinctId}`)
        return undefined
      }),
    )
    as('sink', () => hooks.sink.tapPromise({ name: 'sink' }, async () => undefined), true)
    return { pipeline: new Pipeline(engine(), client.db(testDbName('pipeline')), pino({ level: 'silent' })), ended }
  }

  it('runs the events of one project and distinct_id one after another across concurrent requests', async () => {
    const { pipeline, ended } = pipelineRecording(40)
    const first = pipeline.ingest(request(1, ['slow']))
    const second = pipeline.ingest(request(1, ['slow', 'other']))
    expect(await Promise.all([first, second])).to.deep.equal([
      { stored: 1, dropped: 0 },
      { stored: 2, dropped: 0 },
    ])
    // "other" does not wait; the second request's "slow" waits for the first request's
    expect(ended).to.deep.equal(['1/other', '1/slow', '1/slow'])
  })

  it('does not make the same distinct_id of another project wait', async () => {
    const { pipeline, ended } = pipelineRecording(40)
    const slow = pipeline.ingest(request(1, ['slow']))
    await pipeline.ingest(request(2, ['slow']))
    expect(ended).to.deep.equal(['2/slow'])
    await slow
    expect(ended).to.deep.equal(['2/slow', '1/slow'])
  })

  it('gives the events of one distinct_id in one request one sequence, and no other event or request that sequence', async () => {
    const { hooks, as, engine } = hooksWithOwner()
    const seen: Array<[string, Map<string, unknown>]> = []
    as('step', () =>
      hooks.aliasResolve.tap({ name: 'step' }, (event, ctx) => {
        seen.push([event.distinctId, ctx.sequence])
        ctx.sequence.set('count', ((ctx.sequence.get('count') as number | undefined) ?? 0) + 1)
        return undefined
      }),
    )
    as('sink', () => hooks.sink.tapPromise({ name: 'sink' }, async () => undefined), true)
    const pipeline = new Pipeline(engine(), client.db(testDbName('pipeline')), pino({ level: 'silent' }))
    await pipeline.ingest(request(1, ['a', 'b', 'a', 'a']))
    await pipeline.ingest(request(1, ['a']))
    const sequences = seen.map(([, sequence]) => sequence)
    expect(sequences[0]).to.equal(sequences[2]).and.to.equal(sequences[3])
    expect(new Set(sequences).size).to.equal(3) // a and b of the first request, a of the second
    expect(sequences.map((sequence) => sequence.get('count'))).to.deep.equal([3, 1, 3, 3, 1])
  })
  it("answers a required sink's refusal of the request (413) as it is, and any other sink failure as a retryable 503", async () => {
    const { hooks, as, engine } = hooksWithOwner()
    as(
      'refusing',
      () =>
        hooks.sink.tapPromise({ name: 'refusing' }, async (batch) => {
          if (batch.events.some((e) => e.distinctId === 'huge'))
            throw tooLarge('maximum event size exceeded: event x would be stored as 17000000 bytes')
          if (batch.events.some((e) => e.distinctId === 'down')) throw new Error('connection reset')
        }),
      true,
    )
    const pipeline = new Pipeline(engine(), client.db(testDbName('pipeline')), pino({ level: 'silent' }))
    const refused = await pipeline.ingest(request(1, ['huge'])).catch((e: unknown) => e)
    expect(refused).to.be.instanceOf(HttpError)
    expect((refused as HttpError).toBody()).to.deep.equal({
      type: 'validation_error',
      code: 'payload_too_large',
      detail: 'maximum event size exceeded: event x would be stored as 17000000 bytes',
      attr: null,
    })
    const failed = await pipeline.ingest(request(1, ['down'])).catch((e: unknown) => e)
    expect((failed as HttpError).status).to.equal(503)
    expect((failed as HttpError).retryable).to.equal(true)
  })
})
