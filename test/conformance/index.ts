/**
 * `hedgerow/testing`: what a sink package imports to test itself against the service. The public
 * types are declared once in `.plugin-sdk/testing.d.ts`; the annotations below make the compiler
 * check that this implementation still matches them.
 */
import type * as Published from 'hedgerow/testing'
import { sinkConformance as suite } from './sink-conformance.ts'
import { toStoredEvent as toStored } from './events.ts'

export type { SinkConformanceSubject, SinkInstance } from './sink-conformance.ts'
export type { StoredEvent } from './events.ts'

export const sinkConformance: typeof Published.sinkConformance = suite
export const toStoredEvent: typeof Published.toStoredEvent = toStored
