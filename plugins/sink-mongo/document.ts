/** The stored event document's size (the document itself, EventDocument, is in the contract). */
import { BSON } from 'mongodb'
import type { EventDocument } from '../../core/plugin-api.ts'
import { type HttpError, httpError } from '../../core/plugin-api.ts'

/** MongoDB's limit on one document (every server's `maxBsonObjectSize`); the driver refuses a larger one before sending anything. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
/** The `_id` the driver adds to a document that has none: type byte, `_id` and its NUL, 12 bytes of ObjectId. */
const OBJECT_ID_BYTES = 1 + 4 + 12

/** The size of `doc` as the driver sends it (with the `_id` it adds to a document without one). */
export function documentBytes(doc: EventDocument): number {
  return BSON.calculateObjectSize(doc) + ((doc as { _id?: unknown })._id === undefined ? OBJECT_ID_BYTES : 0)
}

/**
 * A 413 for the first of `docs` the database cannot store, or undefined when each fits. The
 * capture limit on one event (server.eventLimitBytes) keeps the built-in steps far below this;
 * a raised limit or a plugin that adds to events can reach it.
 */
export function tooLargeToStore(docs: readonly EventDocument[]): HttpError | undefined {
  for (const doc of docs) {
    const bytes = measurable(doc)
    if (bytes === undefined || bytes < MAX_DOCUMENT_BYTES) continue
    return httpError(
      'event_too_large',
      `maximum event size exceeded: event ${doc.uuid} would be stored as ${bytes} bytes (its properties and person_properties together); the database stores at most ${MAX_DOCUMENT_BYTES - 1} bytes per event`,
    )
  }
  return undefined
}

/** documentBytes, or undefined for a document that cannot be measured (a cycle overflows the stack): not a size problem. */
function measurable(doc: EventDocument): number | undefined {
  try {
    return documentBytes(doc)
  } catch {
    return undefined
  }
}
