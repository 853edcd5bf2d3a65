/**
 * The cursor of a newest-first admin listing ordered by (created_at, _id), both descending: the
 * last row's time and id, opaque to clients. A cursor this API did not make is a 400 naming it.
 */
import { ObjectId } from 'mongodb'
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
