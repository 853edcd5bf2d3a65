/**
 * What anyone with a project's public key can do with merges (issue 23 item 3): 50 `$create_alias`
 * requests at once over a chain and a star of ids, each with its own `$set`, sent to two services
 * on one database as a load balancer would. A 503 is sent again, as the SDKs do; every request
 * answered 200 must have its property on the person its distinct_id leads to, and every person
 * must be reachable from a distinct id.
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { checkPersons, racePairs } from '../../helpers/persons.ts'
import type { AcknowledgedSet, RaceShape } from '../../helpers/persons.ts'
import { testDbName } from '../../helpers/mongo.ts'

const PLUGINS = [{ plugin: 'validate' }, { plugin: 'persons' }, { plugin: 'sink-mongo', required: true }]
const PAIRS = 50
const ROUNDS = 2
const SENDS = 6

describe('merges racing through two services on one database', function () {
  this.timeout(120_000)
  let services: TestService[]
  before(async () => {
    const database = testDbName('merge-race')
    const first = await startTestService({ plugins: PLUGINS, storage: { database } })
    services = [first, await startTestService({ plugins: PLUGINS, storage: { database } })]
  })
  after(async () => {
    for (const service of services ?? []) await service.close()
  })

  /** One event in its own request, sent again on a 503; whether it was answered 200, and how many sends. */
  async function capture(
    service: TestService,
    token: string,
    event: Record<string, unknown>,
  ): Promise<{ ok: boolean; sends: number }> {
    const body = JSON.stringify({ api_key: token, batch: [{ uuid: randomUUID(), ...event }] })
    for (let send = 1; send <= SENDS; send++) {
      const response = await fetch(`${service.url}/batch/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })
      await response.arrayBuffer()
      if (response.status === 200) return { ok: true, sends: send }
      expect(response.status, 'only a retryable failure is allowed').to.equal(503)
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40))
    }
    return { ok: false, sends: SENDS }
  }

  const races: Array<[RaceShape, string]> = [
    ['chain', '$create_alias'],
    ['chain', '$merge_dangerously'],
    ['star-in', '$create_alias'],
  ]
  for (const [shape, eventName] of races) {
    it(`keeps every acknowledged $set and leaves no orphan: ${PAIRS} ${eventName} at once over a ${shape}, ${ROUNDS} rounds`, async () => {
      const created = await services[0]!.admin('POST', '/api/projects', { name: `${shape} ${eventName}` })
      const project = (await created.json()) as { id: number; api_token: string }
      const acknowledged: AcknowledgedSet[] = []
      let resent = 0
      for (let round = 0; round < ROUNDS; round++) {
        const pairs = racePairs(shape, `${shape}-${round}`, PAIRS)
        const ids = [...new Set(pairs.flatMap(({ into, alias }) => [into, alias]))]
        const sent = async (i: number, distinctId: string, event: Record<string, unknown>, key: string) => {
          const { ok, sends } = await capture(services[i % 2]!, project.api_token, {
            distinct_id: distinctId,
            ...event,
          })
          resent += sends - 1
          if (ok) acknowledged.push({ distinctId, key })
        }
        await Promise.all(
          ids.map((distinctId, i) =>
            sent(
              i,
              distinctId,
              { event: '$pageview', properties: { $set: { [`seen_${distinctId}`]: true } } },
              `seen_${distinctId}`,
            ),
          ),
        )
        await Promise.all(
          pairs.map(({ into, alias }, i) =>
            sent(
              i + round,
              into,
              { event: eventName, properties: { alias, $set: { [`set_${round}_${i}`]: true } } },
              `set_${round}_${i}`,
            ),
          ),
        )
      }
      const check = await checkPersons(services[0]!.service.storage.db, project.id, acknowledged)
      const figures = `${acknowledged.length} acknowledged, ${check.lost.length} of them lost, ${check.orphans.length} orphan persons, ${check.dangling.length} dangling ids, ${resent} sends after a 503, ${check.persons} persons`
      if (process.env.MERGE_RACE_FIGURES) console.log(`HTTP ${shape} ${eventName}: ${figures}`)
      expect(
        check.lost.length,
        `acknowledged but lost: ${figures}; e.g. ${check.lost.slice(0, 5).join(', ')}`,
      ).to.equal(0)
      expect(check.orphans.length, `persons no distinct id leads to: ${figures}`).to.equal(0)
      expect(check.dangling.length, `distinct ids whose person is missing: ${figures}`).to.equal(0)
      expect(acknowledged.length, figures).to.be.greaterThan(ROUNDS * PAIRS)
    })
  }
})
