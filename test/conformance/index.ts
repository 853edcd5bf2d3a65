/**
 * `hedgerow/testing`: what a sink package imports to test itself against the service. The public
 * types are declared once in `.plugin-sdk/testing.d.ts`; the `satisfies` checks below make the
 * compiler prove this implementation still accepts and returns what they promise.
 */
import type * as Published from 'hedgerow/testing'
import { sinkConformance } from './sink-conformance.ts'
import { toStoredEvent } from './events.ts'

export { sinkConformance, toStoredEvent }
export type { SinkConformanceSubject, SinkInstance } from './sink-conformance.ts'
export type { StoredEvent } from './events.ts'

void (sinkConformance satisfies typeof Published.sinkConformance)
void (toStoredEvent satisfies typeof Published.toStoredEvent)
