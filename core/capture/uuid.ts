import { isUuid } from '../plugin-api.ts'

// Steps check uuids of their own (a session id) and make events' uuids, so both are in the contract.
export { isUuid, uuidv7 } from '../plugin-api.ts'

/**
 * The form a uuid is stored and compared in: lower-case hex, as PostHog's capture prints every uuid
 * it parses, so that an SDK's retry is the same event whatever case it sends (the (project, uuid)
 * index and the queue's message ids compare text). Anything that is not a uuid is left as it is,
 * for the validate step to refuse.
 */
export function canonicalUuid(text: string): string {
  return isUuid(text) ? text.toLowerCase() : text
}
