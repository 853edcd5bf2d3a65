/**
 * Boot check of the stream: it exists (created here when allowed) and captures the subjects the
 * sink publishes on, so a wrong setup stops boot naming the stream instead of failing every request.
 */
import { RetentionPolicy, StorageType } from 'nats'
import type { JetStreamManager } from 'nats'
import { covers } from './subject.ts'

const STREAM_NOT_FOUND = 10059

export async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  filter: string,
  options: { createStream: boolean; duplicateWindowMs: number },
): Promise<void> {
  let subjects: string[]
  try {
    subjects = (await jsm.streams.info(name)).config.subjects ?? []
  } catch (error) {
    if ((error as { api_error?: { err_code?: number } }).api_error?.err_code !== STREAM_NOT_FOUND) throw error
    if (!options.createStream)
      throw new Error(`JetStream stream "${name}" does not exist (create it, or set createStream: true)`)
    await jsm.streams.add({
      name,
      subjects: [filter],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      duplicate_window: options.duplicateWindowMs * 1_000_000,
    })
    return
  }
  if (!subjects.some((s) => covers(s, filter))) {
    throw new Error(
      `JetStream stream "${name}" captures ${JSON.stringify(subjects)}, not "${filter}": add that subject to the stream or change the subject option`,
    )
  }
}
