/**
 * What a capture node puts on the ingest stream: one message per event, the client's event as it
 * arrived plus what the pipeline needs from its request (project, receive time, sent_at, IP,
 * historical flag). The subject carries the project and a partition derived from the
 * distinct_id, so that one distinct_id's events stay in order on one consumer.
 */
import type { WireEvent } from '../plugin-api.ts'
import { distinctIdOf } from '../capture/distinct-id.ts'

export interface QueuedEvent {
  readonly projectId: number
  readonly receivedAt: Date
  readonly sentAt?: Date
  readonly ip?: string
  readonly historicalMigration: boolean
  readonly event: WireEvent
}

interface Wire {
  p: number
  r: number
  s?: number
  i?: string
  h?: true
  e: WireEvent
}

export function encodeQueuedEvent(q: QueuedEvent): string {
  const wire: Wire = { p: q.projectId, r: q.receivedAt.getTime(), e: q.event }
  if (q.sentAt) wire.s = q.sentAt.getTime()
  if (q.ip) wire.i = q.ip
  if (q.historicalMigration) wire.h = true
  return JSON.stringify(wire)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Throws on a message no capture node of ours wrote. */
export function decodeQueuedEvent(text: string): QueuedEvent {
  const wire: unknown = JSON.parse(text)
  if (!isObject(wire) || !Number.isInteger(wire.p) || typeof wire.r !== 'number' || !isObject(wire.e))
    throw new Error('not a queued event')
  return {
    projectId: wire.p as number,
    receivedAt: new Date(wire.r),
    sentAt: typeof wire.s === 'number' ? new Date(wire.s) : undefined,
    ip: typeof wire.i === 'string' ? wire.i : undefined,
    historicalMigration: wire.h === true,
    event: wire.e as WireEvent,
  }
}

/** Events that came in one request share these, so a worker runs them as one pipeline batch again. */
export function requestKey(q: QueuedEvent): string {
  return `${q.projectId}|${q.receivedAt.getTime()}|${q.sentAt?.getTime() ?? ''}|${q.ip ?? ''}|${q.historicalMigration}`
}

/** FNV-1a (32 bit) of the distinct_id: stable across processes and versions, cheap, well spread. */
export function partitionOf(event: WireEvent, partitions: number): number {
  const id = distinctIdOf(event)
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % partitions
}

export const subjectOf = (prefix: string, projectId: number, partition: number) => `${prefix}.${projectId}.${partition}`

/** Every project's subjects of one partition: a consumer's filter. */
export const partitionFilter = (prefix: string, partition: number) => `${prefix}.*.${partition}`
