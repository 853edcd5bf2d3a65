/**
 * Merges racing each other (issue 23 item 3): many `$create_alias` / `$merge_dangerously` events
 * at once over a chain and over a star of ids, each with its own `$set`, run through the
 * aliasResolve and personUpdate steps on two stores, as two processes on one database would.
 * A request that fails retryably is sent again, as the SDKs do; every one that succeeds must have
 * its property on the person its distinct_id leads to, and no person may be left without an id.
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'chai'
import { resolveEvent } from '../../../plugins/persons/resolve.ts'
import { updateEvent } from '../../../plugins/persons/update.ts'
import type { PersonStore } from '../../../plugins/persons/person-store.ts'
import { checkPersons, racePairs } from '../../helpers/persons.ts'
import type { AcknowledgedSet, RaceShape } from '../../helpers/persons.ts'
import { contextFor, nextProjectId, openPersonDb, personEvent } from './fixtures.ts'
import type { PersonDb } from './fixtures.ts'

const RESOLVE = { forceUpgrade: true, forceUpgradeAfterMs: 60_000 }
const UPDATE = { skipFilteredWrites: true, setOnceFillsNull: true, maxKeysPerOperation: 1000 }
const PAIRS = 50
const ROUNDS = 2
/** Sends of one request at most (the first and its retries). */
const SENDS = 6

interface Outcome {
  acknowledged: AcknowledgedSet[]
  retried: number
  failed: number
}

/** One event through both person steps, sent again on a retryable failure; true once it succeeded. */
async function send(
  store: () => PersonStore,
  projectId: number,
  event: Parameters<typeof personEvent>[0],
  outcome: Outcome,
): Promise<boolean> {
  for (let attempt = 0; attempt < SENDS; attempt++) {
    const ctx = contextFor(projectId)
    try {
      const resolved = await resolveEvent(store(), personEvent({ uuid: randomUUID(), ...event }), ctx, RESOLVE)
      await updateEvent(store(), resolved, ctx, UPDATE)
      return true
    } catch (error) {
      if ((error as { retryable?: boolean }).retryable !== true) throw error
      outcome.retried++
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20))
    }
  }
  outcome.failed++
  return false
}

describe('persons: merges racing each other', function () {
  this.timeout(120_000)
  let t: PersonDb
  before(async () => {
    t = await openPersonDb('merge-race')
  })
  after(() => t.close())

  async function race(shape: RaceShape, eventName: string): Promise<void> {
    const projectId = nextProjectId()
    const stores = [t.store(), t.store()]
    const outcome: Outcome = { acknowledged: [], retried: 0, failed: 0 }
    for (let round = 0; round < ROUNDS; round++) {
      const pairs = racePairs(shape, `r${round}`, PAIRS)
      // every id gets its person first (a pageview with its own $set), so the merges move persons
      const ids = [...new Set(pairs.flatMap(({ into, alias }) => [into, alias]))]
      await Promise.all(
        ids.map(async (distinctId, i) => {
          const key = `seen_${distinctId}`
          if (
            await send(() => stores[i % 2]!, projectId, { distinctId, properties: { $set: { [key]: true } } }, outcome)
          )
            outcome.acknowledged.push({ distinctId, key })
        }),
      )
      await Promise.all(
        pairs.map(async ({ into, alias }, i) => {
          const key = `set_${round}_${i}`
          const properties = { alias, $set: { [key]: true } }
          if (
            await send(
              () => stores[(i + round) % 2]!,
              projectId,
              { event: eventName, distinctId: into, properties },
              outcome,
            )
          )
            outcome.acknowledged.push({ distinctId: into, key })
        }),
      )
    }
    const check = await checkPersons(t.db, projectId, outcome.acknowledged)
    const figures = `${outcome.acknowledged.length} acknowledged, ${check.lost.length} of them lost, ${check.orphans.length} orphan persons, ${check.dangling.length} dangling ids, ${outcome.retried} retried sends, ${outcome.failed} given up, ${check.persons} persons`
    if (process.env.MERGE_RACE_FIGURES) console.log(`${shape} ${eventName}: ${figures}`)
    expect(check.lost.length, `acknowledged but lost: ${figures}; e.g. ${check.lost.slice(0, 5).join(', ')}`).to.equal(
      0,
    )
    expect(check.orphans.length, `persons no distinct id leads to: ${figures}`).to.equal(0)
    expect(check.dangling.length, `distinct ids whose person is missing: ${figures}`).to.equal(0)
    expect(outcome.acknowledged.length, figures).to.be.greaterThan(ROUNDS * PAIRS)
    // $merge_dangerously merges whatever the order: the pairs of a round link all its ids, so once
    // every merge of the round was acknowledged, its ids have one person
    if (eventName === '$merge_dangerously' && outcome.failed === 0)
      expect(check.persons, `every merge acknowledged: ${figures}`).to.equal(ROUNDS)
  }

  for (const shape of ['chain', 'star-in', 'star-out'] as const) {
    for (const eventName of ['$create_alias', '$merge_dangerously']) {
      it(`keeps every acknowledged $set and leaves no orphan: ${PAIRS} ${eventName} at once over a ${shape}, ${ROUNDS} rounds, two stores`, () =>
        race(shape, eventName))
    }
  }
})
