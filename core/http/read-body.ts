/**
 * Reads a request body as bytes, refusing more than `limit` with 413 before buffering it: the
 * declared Content-Length is checked first, then the bytes actually received.
 */
import type { IncomingMessage } from 'node:http'
import { HttpError, tooLarge } from '../errors.ts'

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(`the request body is ${declared} bytes, over the limit of ${limit} bytes`)
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > limit) throw tooLarge(`the request body is over the limit of ${limit} bytes`)
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof HttpError) throw error
    throw new HttpError(400, 'validation_error', 'body_read_failed', `the request body could not be read: ${(error as Error).message}`)
  }
  return Buffer.concat(chunks, size)
}
