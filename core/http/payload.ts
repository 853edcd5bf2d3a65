/**
 * Reading what an SDK sent, the same way on every endpoint that takes SDK traffic (capture, flags):
 * the query and headers as single strings, and the body (or `?data=`) through the capture decoder,
 * which accepts every encoding the SDKs use and enforces the wire and decoded size limits.
 */
import type { Context } from 'koa'
import { decodePayload } from '../capture/decode.ts'
import type { DecodeLimits } from '../capture/decode.ts'
import { readBody } from './read-body.ts'

/** The first value of each key (a repeated query parameter or header keeps its first value). */
export function singleValues(
  record: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | undefined> {
  const single: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(record)) single[key] = Array.isArray(value) ? value[0] : value
  return single
}

/**
 * The decoded JSON text of the request. With `allowEmpty`, a request with neither body nor `data=`
 * gives undefined instead of the decoder's 400.
 */
export function readPayload(
  ctx: Context,
  query: Record<string, string | undefined>,
  limits: DecodeLimits,
): Promise<string>
export function readPayload(
  ctx: Context,
  query: Record<string, string | undefined>,
  limits: DecodeLimits,
  allowEmpty: true,
): Promise<string | undefined>
export async function readPayload(
  ctx: Context,
  query: Record<string, string | undefined>,
  limits: DecodeLimits,
  allowEmpty = false,
): Promise<string | undefined> {
  const body = ctx.method === 'POST' ? await readBody(ctx.req, limits.maxBodyBytes) : Buffer.alloc(0)
  if (allowEmpty && body.length === 0 && !query.data) return undefined
  return decodePayload(
    {
      method: ctx.method,
      path: ctx.path,
      query,
      contentType: ctx.get('Content-Type') || undefined,
      contentEncoding: ctx.get('Content-Encoding') || undefined,
      body,
    },
    limits,
  )
}
