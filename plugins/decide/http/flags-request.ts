/**
 * The body of a /flags or /decide request (flags.md §7.3): JSON5 (so `NaN` and `Infinity` parse,
 * and become null), the aliases SDKs have used over the years resolved to one name each, then
 * checked against a TypeBox schema (400 naming the field). The token is read separately so that a
 * missing or unknown key answers 401 before the body's other fields are judged.
 */
import JSON5 from 'json5'
import { Type } from 'typebox'
import type { Static } from 'typebox'
import { parseWith, httpError } from '../../../core/plugin-api.ts'

const Json = Type.Record(Type.String(), Type.Unknown())
const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]))

export const FlagsBody = Type.Object({
  distinct_id: Type.Union([Type.String(), Type.Number()]),
  groups: Nullable(Json),
  person_properties: Nullable(Json),
  group_properties: Nullable(Type.Record(Type.String(), Json)),
  anon_distinct_id: Nullable(Type.Union([Type.String(), Type.Number()])),
  device_id: Nullable(Type.String()),
  flag_keys: Nullable(Type.Array(Type.String())),
  evaluation_runtime: Nullable(Type.String()),
  evaluation_contexts: Nullable(Type.Array(Type.String())),
  disable_flags: Type.Optional(Type.Unknown()),
  geoip_disable: Type.Optional(Type.Unknown()),
})

export type FlagsBodyFields = Static<typeof FlagsBody>

/** Our name ← the names SDKs send, first present wins. */
const ALIASES: Record<keyof FlagsBodyFields, string[]> = {
  distinct_id: ['distinct_id', '$distinct_id'],
  groups: ['groups', '$groups'],
  person_properties: ['person_properties', '$properties'],
  group_properties: ['group_properties', '$group_properties'],
  anon_distinct_id: ['$anon_distinct_id', 'anon_distinct_id'],
  device_id: ['$device_id', 'device_id'],
  flag_keys: ['flag_keys', 'flag_keys_to_evaluate'],
  evaluation_runtime: ['evaluation_runtime'],
  evaluation_contexts: ['evaluation_contexts', 'evaluation_environments'],
  disable_flags: ['disable_flags'],
  geoip_disable: ['geoip_disable'],
}
const TOKEN_NAMES = ['token', 'api_key', '$token']
const ALIAS_ENTRIES = Object.entries(ALIASES)

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** JSON.parse of the written values, with non-finite numbers (JSON5's NaN and Infinity) as null. */
function finite(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (Array.isArray(value)) return value.map(finite)
  if (isRecord(value)) {
    for (const key of Object.keys(value)) value[key] = finite(value[key])
  }
  return value
}

/** The body as an object. Plain JSON takes the fast path; JSON5 is tried only when JSON fails. */
export function parseFlagsJson(text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    try {
      value = finite(JSON5.parse(text))
    } catch (error) {
      throw httpError('invalid_json', `failed to parse the request body: ${(error as Error).message}`)
    }
  }
  if (!isRecord(value)) throw httpError('invalid_json', 'the request body must be a JSON object')
  return value
}

/** The project key: the body's `token`, `api_key` or `$token`, else the same names in the query. */
export function tokenOf(body: Record<string, unknown>, query: Record<string, string | undefined>): string | undefined {
  for (const name of TOKEN_NAMES) {
    const value = body[name]
    if (typeof value === 'string' && value.trim() !== '') return value.trim()
  }
  for (const name of TOKEN_NAMES) {
    const value = query[name]
    if (value && value.trim() !== '') return value.trim()
  }
  return undefined
}

export function readFlagsBody(body: Record<string, unknown>): FlagsBodyFields {
  const normalised: Record<string, unknown> = {}
  for (const [name, aliases] of ALIAS_ENTRIES)
    for (const alias of aliases)
      if (Object.hasOwn(body, alias) && body[alias] !== undefined) {
        normalised[name] = body[alias]
        break
      }
  return parseWith(FlagsBody, normalised)
}
