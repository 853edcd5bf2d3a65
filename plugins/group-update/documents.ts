/**
 * What group-update's writes share. The stored shapes of groups and group types are in the
 * contract (GroupDocument, GroupTypeMappingDocument: decide reads them through the core's `groups`
 * service) and their indexes in core/model/groups.ts, created at boot.
 */
import { retryableError } from '../../core/plugin-api.ts'

/** A write that kept losing races: the request answers 503 and the SDK retries it. */
export function contention(what: string): Error {
  return retryableError(`${what}: too many concurrent writers, retry`)
}
