// The public API of `hedgerow/testing` (implemented by test/conformance/index.ts, which the
// compiler checks against these declarations).
import type { PluginDefinition } from 'hedgerow/plugin-api'

/** One stored event as the suite compares it: a sink reads back what it wrote and maps it here. */
export interface StoredEvent {
  uuid: string
  event: string
  distinctId: string
  projectId: number
  /** ISO 8601 with milliseconds (`Date#toISOString`). */
  timestamp: string
  properties: Record<string, unknown>
}

/** The instance the suite is about to start, so options can differ (a new file, stream, URL). */
export interface SinkInstance {
  readonly required: boolean
}

export interface SinkConformanceSubject<O extends object = Record<string, unknown>> {
  /** The plugin definition exactly as the package exports it. */
  readonly plugin: PluginDefinition
  /** Valid options for one fresh instance; called once per service the suite starts. */
  options(instance: SinkInstance): O | Promise<O>
  /** Options the schema must refuse (besides an unknown key, which every schema must refuse). */
  readonly invalidOptions?: readonly unknown[]
  /** Everything the instance with these options has stored so far, read back from its destination. */
  read(options: O): Promise<readonly StoredEvent[]>
  /** Make this instance's destination refuse writes from now on (stop a server, delete a stream...). */
  fail(options: O): void | Promise<void>
  /** Step, setup and shutdown timeout of the service (default 5000 ms). */
  readonly timeoutMs?: number
}

/**
 * Defines a mocha `describe` block that runs the sink inside the real service (its own embedded
 * database, HTTP on a loopback port) and checks the contract: definition shape and apiVersion,
 * options schema, taps only `sink`, every event stored once and completely before a 200 when
 * required, large and concurrent batches, no mutation of events, teardown flush, and failure
 * isolation (optional: 200 and other sinks unaffected; required: 503). Call it at a test file's
 * top level; it closes everything it started.
 */
export declare function sinkConformance<O extends object>(subject: SinkConformanceSubject<O>): void

/** Maps the standard event document (what the built-in sinks write, as JSON) to a StoredEvent. */
export declare function toStoredEvent(document: Readonly<Record<string, unknown>>): StoredEvent
