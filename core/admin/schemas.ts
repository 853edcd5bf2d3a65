/** Request schemas of the admin API, checked with TypeBox; a failure is a 400 naming the field. */
import { Type } from 'typebox'
import type { Static, TSchema } from 'typebox'
import { check } from '../schema.ts'
import { badRequest } from '../errors.ts'

export const CreateProjectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
)

export const EventsQuery = Type.Object({
  event: Type.Optional(Type.String()),
  distinct_id: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
  before: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
})

export const AuditQuery = Type.Object(
  {
    entity_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    cursor: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  },
  { additionalProperties: false },
)

/** Validates `value` against `schema`, or throws a 400 whose `attr` is the offending field. */
export function parseWith<S extends TSchema>(schema: S, value: unknown): Static<S> {
  const result = check(schema, value)
  if (result.ok) return result.value
  const attr = result.path.replace(/^\//, '').replaceAll('/', '.') || null
  throw badRequest('invalid_input', attr ? `${attr}: ${result.reason}` : `the request body: ${result.reason}`, attr)
}
