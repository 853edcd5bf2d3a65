/** Checks a store against what a CaptureLoad saw acknowledged. */
import type { Db } from 'mongodb'
import type { CaptureLoad } from './load.ts'

export interface StoreCheck {
  events: number
  duplicates: number
  missingEvents: string[]
  missingPersonKeys: string[]
  personKeysChecked: number
}

export async function checkStore(db: Db, projectId: number, load: CaptureLoad): Promise<StoreCheck> {
  const perUuid = await db
    .collection('events')
    .aggregate<{ _id: string; n: number }>([
      { $match: { project_id: projectId } },
      { $group: { _id: '$uuid', n: { $sum: 1 } } },
    ])
    .toArray()
  const stored = new Map(perUuid.map((row) => [row._id, row.n]))
  const missingEvents = [...load.acked].filter((uuid) => !stored.has(uuid))
  const missingPersonKeys: string[] = []
  let personKeysChecked = 0
  for (const [distinctId, keys] of load.ackedPersonKeys) {
    const mapping = await db
      .collection('person_distinct_ids')
      .findOne({ project_id: projectId, distinct_id: distinctId })
    const person = mapping
      ? await db.collection('persons').findOne({ project_id: projectId, id: mapping.person_id })
      : null
    const properties = (person?.properties ?? {}) as Record<string, unknown>
    for (const key of keys) {
      personKeysChecked += 1
      if (!Object.hasOwn(properties, key)) missingPersonKeys.push(`${distinctId}.${key}`)
    }
  }
  return {
    events: stored.size,
    duplicates: perUuid.filter((row) => row.n > 1).length,
    missingEvents,
    missingPersonKeys,
    personKeysChecked,
  }
}
