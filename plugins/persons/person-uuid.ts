/**
 * Deterministic person uuids (capture.md §2.3, §2.5): the UUIDv5 of "<project_id>:<distinct_id>".
 * A person created for a distinct_id and the fake person of its personless events share the uuid,
 * so personless events need no re-pointing when that id later gets a real person.
 */
import { createHash } from 'node:crypto'
import { ProjectKeyed } from './project-keyed.ts'

/** PostHog's namespace for person uuids; keeping it keeps uuids equal to PostHog's. */
export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22'

/** `created_at` of the fake person that personless events are attributed to. */
export const FAKE_PERSON_CREATED_AT = new Date('1970-01-01T00:00:05Z')

/** Namespace bytes by namespace string: computed once, since every event of every request needs one. */
const namespaceBytes = new Map<string, Buffer>()

/** RFC 9562 version 5: SHA-1 of namespace bytes then UTF-8 name, with version and variant bits set. */
export function uuidv5(name: string, namespace: string): string {
  let bytes = namespaceBytes.get(namespace)
  if (!bytes) {
    bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex')
    if (namespaceBytes.size < 16) namespaceBytes.set(namespace, bytes)
  }
  const hash = createHash('sha1').update(bytes).update(name, 'utf8').digest()
  hash[6] = 0x50 | (hash[6]! & 0x0f)
  hash[8] = 0x80 | (hash[8]! & 0x3f)
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Person uuids of recent ids: a personless visitor sends many events, and each needs the SHA-1. */
const recentUuids = new ProjectKeyed<string>(10_000)

export function personUuid(projectId: number, distinctId: string): string {
  let uuid = recentUuids.get(projectId, distinctId)
  if (uuid === undefined) {
    uuid = uuidv5(`${projectId}:${distinctId}`, PERSON_UUID_NAMESPACE)
    recentUuids.set(projectId, distinctId, uuid)
  }
  return uuid
}
