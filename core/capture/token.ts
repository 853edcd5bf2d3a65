/**
 * Where a capture request carries its project API key, and which keys are refused outright
 * (capture.md §1.5). Whether the key belongs to a project is decided later, with the database.
 */
import { httpError } from '../errors.ts'
import type { WireEvent } from './request.ts'

const MAX_TOKEN_BYTES = 64

export type TokenProblem = 'empty' | 'too_long' | 'not_ascii' | 'personal_api_key' | 'null_byte'

/** The first string among `keys` on `holder`; other JSON types do not count as a token. */
function stringField(holder: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = holder[key]
    if (typeof value === 'string') return value
  }
  return undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The token a batch body declares for all its events. */
export function batchTokenOf(body: Record<string, unknown>): string | undefined {
  return stringField(body, ['api_key', 'token', '$token'])
}

/** An event's own token; posthog-js puts it in `properties.token`. */
export function eventTokenOf(event: WireEvent): string | undefined {
  const own = stringField(event, ['token', '$token', 'api_key'])
  if (own !== undefined) return own
  return isObject(event.properties) ? stringField(event.properties, ['token']) : undefined
}

export function tokenProblem(token: string): TokenProblem | undefined {
  if (token.length === 0) return 'empty'
  if (Buffer.byteLength(token, 'utf8') > MAX_TOKEN_BYTES) return 'too_long'
  if (!/^[\x00-\x7f]*$/.test(token)) return 'not_ascii'
  if (token.startsWith('phx_')) return 'personal_api_key'
  if (token.includes('\0')) return 'null_byte'
  return undefined
}

/**
 * The request's token, trimmed and validated: the batch's own key wins; otherwise every
 * event that names one must name the same one.
 */
export function resolveToken(batchToken: string | undefined, events: readonly WireEvent[]): string {
  let token = batchToken?.trim()
  if (token === undefined) {
    const named = new Set<string>()
    for (const event of events) {
      const own = eventTokenOf(event)
      if (own !== undefined) named.add(own.trim())
    }
    if (named.size > 1) {
      throw httpError('inconsistent_api_keys', 'batch submitted with inconsistent api_key values', 'api_key')
    }
    token = named.values().next().value
  }
  if (token === undefined) throw httpError('missing_api_key', 'event submitted without an api_key', 'api_key')
  const problem = tokenProblem(token)
  if (problem) throw httpError('invalid_api_key', `API key is not valid: ${problem}`, 'api_key')
  return token
}
