/**
 * What the person collections hold after many merges raced: is every acknowledged `$set` on the
 * person its distinct id leads to, and is every person reachable from at least one distinct id?
 * Read straight from the database (mapping, then person), as an operator would.
 */
import type { Db } from 'mongodb'

/** A property an answered-200 request set on the person of `distinctId`. */
export interface AcknowledgedSet {
  readonly distinctId: string
  readonly key: string
}

export interface PersonsCheck {
  /** Acknowledged properties found on no person reachable from their distinct id. */
  readonly lost: string[]
  /** Person documents no distinct id leads to. */
  readonly orphans: string[]
  /** Distinct ids whose person document is missing. */
  readonly dangling: string[]
  readonly persons: number
}

export async function checkPersons(
  db: Db,
  projectId: number,
  acknowledged: Iterable<AcknowledgedSet>,
): Promise<PersonsCheck> {
  const mappings = await db
    .collection('person_distinct_ids')
    .find({ project_id: projectId }, { projection: { _id: 0, distinct_id: 1, person_id: 1 } })
    .toArray()
  const persons = await db
    .collection('persons')
    .find({ project_id: projectId }, { projection: { _id: 0, id: 1, properties: 1 } })
    .toArray()
  const byId = new Map(persons.map((person) => [person.id as string, person.properties as Record<string, unknown>]))
  const personOf = new Map(mappings.map((mapping) => [mapping.distinct_id as string, mapping.person_id as string]))
  const lost: string[] = []
  for (const { distinctId, key } of acknowledged) {
    const properties = byId.get(personOf.get(distinctId) ?? '')
    if (!properties || !Object.hasOwn(properties, key)) lost.push(`${distinctId}.${key}`)
  }
  const reached = new Set(personOf.values())
  return {
    lost,
    orphans: [...byId.keys()].filter((id) => !reached.has(id)),
    dangling: [...personOf].filter(([, personId]) => !byId.has(personId)).map(([distinctId]) => distinctId),
    persons: persons.length,
  }
}

/** The shapes the races run: each pair asks to merge `alias`'s person into `into`'s. */
export type RaceShape = 'chain' | 'star-in' | 'star-out'

export function racePairs(shape: RaceShape, prefix: string, count: number): Array<{ into: string; alias: string }> {
  return Array.from({ length: count }, (_, i) => {
    if (shape === 'chain') return { into: `${prefix}-${i + 1}`, alias: `${prefix}-${i}` }
    if (shape === 'star-in') return { into: `${prefix}-hub`, alias: `${prefix}-${i}` }
    return { into: `${prefix}-${i}`, alias: `${prefix}-hub` }
  })
}
