/**
 * Per-flag usage from `$feature_flag_called` events: how often each flag is checked, when it was
 * last checked, and which values it answered. Operators read it to find stale flags (never called,
 * or always one value). Flag keys are only ever filter values, never update paths.
 */
import type { Collection, Db } from 'mongodb'

export const USAGE_COLLECTION = 'feature_flag_usage'
/** Values remembered per flag; a flag answering more distinct values than this is not "stale" anyway. */
export const MAX_VALUES = 50

export interface FlagUsageDocument {
  project_id: number
  flag_key: string
  calls: number
  first_called_at: Date
  last_called_at: Date
  values: Array<string | boolean>
}

export function usageCollection(db: Db): Collection<FlagUsageDocument> {
  return db.collection<FlagUsageDocument>(USAGE_COLLECTION)
}

export async function ensureUsageIndexes(db: Db): Promise<void> {
  await usageCollection(db).createIndexes([
    { key: { project_id: 1, flag_key: 1 }, name: 'project_flag_unique', unique: true },
  ])
}

/** The answer as a short comparable value: a variant string or a boolean; anything else as JSON text. */
export function responseValue(value: unknown): string | boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') return value.slice(0, 200)
  return JSON.stringify(value ?? null).slice(0, 200)
}

/** One atomic pipeline update: counters and a bounded set of seen values, upserted. */
export async function recordCall(
  db: Db,
  projectId: number,
  flagKey: string,
  value: string | boolean,
  at: Date,
): Promise<void> {
  const values = { $ifNull: ['$values', []] }
  await usageCollection(db).updateOne(
    { project_id: projectId, flag_key: flagKey },
    [
      {
        $set: {
          calls: { $add: [{ $ifNull: ['$calls', 0] }, 1] },
          first_called_at: { $min: [{ $ifNull: ['$first_called_at', at] }, at] },
          last_called_at: { $max: [{ $ifNull: ['$last_called_at', at] }, at] },
          values: {
            $cond: [{ $lt: [{ $size: values }, MAX_VALUES] }, { $setUnion: [values, [{ $literal: value }]] }, values],
          },
        },
      },
    ],
    { upsert: true },
  )
}

export async function listUsage(db: Db, projectId: number): Promise<Array<Omit<FlagUsageDocument, 'project_id'>>> {
  return usageCollection(db)
    .find({ project_id: projectId }, { projection: { _id: 0, project_id: 0 } })
    .sort({ flag_key: 1 })
    .toArray()
}
