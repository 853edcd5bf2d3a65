/** Request schemas of the admin API, checked with the contract's `parseWith` (a 400 naming the field). */
import { Type } from 'typebox'

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

export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  },
  { additionalProperties: false },
)

export const LiveEventsQuery = Type.Object(
  {
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    distinct_id: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  },
  { additionalProperties: false },
)
