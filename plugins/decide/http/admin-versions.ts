/**
 * Optimistic concurrency for flag and cohort edits. A change names the version it was made
 * against, as `version` in the body or as `If-Match: "<version>"` (the ETag its GET answered);
 * when the stored version differs, someone else changed it meanwhile and the edit is refused with
 * 409 `stale_version` instead of overwriting their change. A change naming no version is applied
 * to whatever is stored, as PostHog's API does, so existing clients keep working.
 */
import type { Context } from 'koa'
import { httpError } from '../../../core/plugin-api.ts'

/** `"3"`, `W/"3"` or `3`; `*` (any version) is no condition. */
const IF_MATCH = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/

/** The version the request edits, from the body or If-Match (both: they must agree); undefined: unconditional. */
export function expectedVersion(ctx: Context, bodyVersion: number | undefined): number | undefined {
  const header = ctx.get('If-Match')
  if (header === '' || header.trim() === '*') return bodyVersion
  const match = IF_MATCH.exec(header)
  if (!match) throw httpError('invalid_input', 'If-Match must be the quoted version an ETag gave, e.g. "3"', 'If-Match')
  const version = Number(match[1])
  if (bodyVersion !== undefined && bodyVersion !== version)
    throw httpError('invalid_input', `version ${bodyVersion} and If-Match ${version} disagree`, 'version')
  return version
}

/** Refuses the edit when the stored version is not the one the request was made against. */
export function assertVersion(what: string, stored: number, expected: number | undefined): void {
  if (expected === undefined || expected === stored) return
  throw httpError(
    'stale_version',
    `the ${what} is at version ${stored}, not ${expected}: it was changed meanwhile; read it again and redo the change`,
    'version',
  )
}

/** The version as an ETag, for the next change's If-Match. */
export function setVersionTag(ctx: Context, version: number): void {
  ctx.set('ETag', `"${version}"`)
}
