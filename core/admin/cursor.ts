/**
 * Newest-first admin listings ordered by (created_at, _id), both descending, a page at a time. The
 * cursor is the last row's time and id, opaque to clients; a cursor this API did not make, or a
 * limit out of range, is a 400 naming it.
 */
import { ObjectId } from 'mongodb'
import type { Collection, Document, Filter, WithId } from 'mongodb'
import { httpError } from '../errors.ts'

export function encodeCursor(createdAt: Date, id: unknown): string {
  return Buffer.from(JSON.stringify({ t: createdAt.toISOString(), i: String(id) })).toString('base64url')
}

export function decodeCursor(cursor: string): { t: Date; i: ObjectId } {
  try {
    const { t, i } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t: string; i: string }
    const date = new Date(t)
    if (Number.isNaN(date.getTime()) || !/^[0-9a-f]{24}$/i.test(i)) throw new Error('bad cursor')
    return { t: date, i: new ObjectId(i) }
  } catch {
    throw httpError('invalid_input', 'cursor is not a cursor this API returned', 'cursor')
  }
}

/** `?limit=`: `fallback` when absent, else a whole number from 1 to `max`. */
export function pageLimit(value: string | undefined, fallback: number, max: number): number {
  const limit = value === undefined ? fallback : Number(value)
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= max))
    throw httpError('invalid_input', `limit must be between 1 and ${max}`, 'limit')
  return limit
}

/** The `limit` rows of `filter` after the cursor, newest first, and the URL of the next page (null on the last). */
export async function newestFirstPage<T extends Document & { created_at: Date }>(
  collection: Collection<T>,
  filter: Filter<T>,
  cursor: string | undefined,
  limit: number,
  url: URL,
): Promise<{ page: WithId<T>[]; next: string | null }> {
  const narrowed = { ...filter } as Filter<Document>
  if (cursor !== undefined) {
    const { t, i } = decodeCursor(cursor)
    narrowed.$or = [{ created_at: { $lt: t } }, { created_at: t, _id: { $lt: i } }]
  }
  const docs = await collection
    .find(narrowed as Filter<T>)
    .sort({ created_at: -1, _id: -1 })
    .limit(limit + 1)
    .toArray()
  const page = docs.slice(0, limit)
  const last = page[page.length - 1]
  if (docs.length <= limit || !last) return { page, next: null }
  const nextUrl = new URL(url)
  nextUrl.searchParams.set('cursor', encodeCursor(last.created_at, last._id))
  return { page, next: nextUrl.toString() }
}
