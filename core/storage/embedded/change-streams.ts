import { Aggregator, Query } from 'mingo'
import { Timestamp } from 'bson'
import { decode, encode, isPlainObject, type Doc } from './bson/codec.ts'
import type { ChangeStreams } from './commands/context.ts'
import type { CursorSource } from './cursors.ts'
import type { CatalogListener } from './engine/catalog.ts'
import type { Collection } from './engine/collection.ts'
import { MINGO_OPTIONS } from './engine/matcher.ts'
import { mongoError, MongoServerError, notSupported, toMongoError } from './errors.ts'

interface ChangeEvent {
  seq: number
  db: string
  coll?: string
  operationType: string
  clusterTime: Timestamp
  wallTime: Date
  /**
   * The event's own fields (ns, documentKey, fullDocument...), made when a stream reads it: the
   * writes of capture pass through here, and most are never read by any stream, so they are kept
   * as their BSON bytes and decoded on demand.
   */
  fields: () => Doc
  /** The document after the change, for fullDocument: 'updateLookup'. */
  after?: () => Doc
  /** What the event holds, counted in its documents' BSON bytes. */
  bytes: number
}

/**
 * The history is MongoDB's oplog window: a stream that falls further behind cannot resume (code
 * 286). It is bounded by bytes as well as by count: 10,000 large events would otherwise hold
 * gigabytes that no stream ever reads. An update counts twice its document: it keeps the versions
 * before and after, for its updateDescription.
 */
const HISTORY = 10_000
const HISTORY_BYTES = 16 * 1024 * 1024
/** Bytes counted for an event without a document (delete, drop, rename). */
const EVENT_BYTES = 200
const STAGES_AFTER_CHANGE_STREAM = new Set([
  '$match',
  '$project',
  '$addFields',
  '$set',
  '$unset',
  '$replaceRoot',
  '$replaceWith',
  '$redact',
])

const token = (seq: number) => ({ _data: seq.toString(16).padStart(16, '0') })

function seqOf(resumeToken: unknown): number {
  const data = isPlainObject(resumeToken) ? resumeToken._data : undefined
  if (typeof data !== 'string' || !/^[0-9a-f]{16}$/.test(data))
    throw mongoError('BadValue', 'invalid resume token: not issued by this server')
  return parseInt(data, 16)
}

function topLevelDiff(before: Doc, after: Doc): Doc {
  const updatedFields: Doc = {}
  const removedFields: string[] = []
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before) || !Buffer.from(encode({ v })).equals(Buffer.from(encode({ v: before[k] }))))
      updatedFields[k] = v
  }
  for (const k of Object.keys(before)) if (!(k in after)) removedFields.push(k)
  return { updatedFields, removedFields, truncatedArrays: [] }
}

/** The kinds of change to documents (the others, drops and renames, may invalidate a stream). */
const DATA_CHANGES = new Set(['insert', 'update', 'replace', 'delete'])

/**
 * Whether a change of this operationType can pass the pipeline's first stage, when that is a
 * `$match` on operationType alone: decided before the event is made, so a stream that follows a
 * few kinds of change does not decode every document written (true when it cannot tell).
 */
function operationTypeFilter(stage: Doc | undefined): (operationType: string) => boolean {
  const match = stage?.$match
  if (!isPlainObject(match) || Object.keys(match).some((key) => key !== 'operationType')) return () => true
  const query = new Query(match as Record<string, unknown>, MINGO_OPTIONS)
  return (operationType) => query.test({ operationType })
}

/**
 * Change streams over a bounded in-memory history of the last changes (replica-set mode only).
 * Events have MongoDB's shape; resume tokens are positions in this history, so a stream can
 * resume after a reconnect but not across a server restart (the history is not persisted).
 */
export class ChangeFeed implements CatalogListener, ChangeStreams {
  private events: ChangeEvent[] = []
  private bytes = 0
  private seq = 0
  private readonly waiters = new Set<() => void>()
  private closed = false

  private emit(
    db: string,
    coll: string | undefined,
    operationType: string,
    fields: () => Doc,
    after?: () => Doc,
    bytes = EVENT_BYTES,
  ): void {
    this.seq += 1
    const wallTime = new Date()
    const clusterTime = new Timestamp({ t: Math.floor(wallTime.getTime() / 1000), i: this.seq })
    this.events.push({ seq: this.seq, db, coll, operationType, clusterTime, wallTime, fields, after, bytes })
    this.bytes += bytes
    // trimmed in steps, not per event, so that a write does not shift the whole array
    if (this.events.length > HISTORY * 1.2 || this.bytes > HISTORY_BYTES * 1.2) this.trim()
    if (this.waiters.size) for (const wake of [...this.waiters]) wake()
  }

  /** Drops the oldest events until the history is within both bounds (the newest always stays). */
  private trim(): void {
    let drop = 0
    while (drop < this.events.length - 1 && (this.events.length - drop > HISTORY || this.bytes > HISTORY_BYTES))
      this.bytes -= this.events[drop++]!.bytes
    this.events = this.events.slice(drop)
  }

  /** The event as MongoDB shows it. */
  private static shown(e: ChangeEvent): Doc {
    const event: Doc = { _id: token(e.seq), operationType: e.operationType }
    // descriptors, not a spread: a field made on demand (an update's diff) stays so, and a stage
    // that drops it (a $project) never makes it
    Object.defineProperties(event, Object.getOwnPropertyDescriptors(e.fields()))
    event.clusterTime = e.clusterTime
    event.wallTime = e.wallTime
    return event
  }

  inserted(coll: Collection, raw: Uint8Array): void {
    // a copy: the bytes may be a view of a buffer the server reuses
    const bytes = Uint8Array.prototype.slice.call(raw)
    const ns = { db: coll.db, coll: coll.name }
    const doc = () => decode(bytes)
    this.emit(
      coll.db,
      coll.name,
      'insert',
      () => {
        // getters: a stream that projects the document away never decodes it
        let decoded: Doc | undefined
        const full = () => (decoded ??= doc())
        return {
          ns,
          get documentKey() {
            return { _id: full()._id }
          },
          get fullDocument() {
            return full()
          },
        }
      },
      doc,
      raw.length,
    )
  }

  replaced(coll: Collection, before: Doc, raw: Buffer, after: Doc, kind: 'update' | 'replace'): void {
    const base = { ns: { db: coll.db, coll: coll.name }, documentKey: { _id: after._id } }
    const afterDoc = () => after
    if (kind === 'replace')
      this.emit(coll.db, coll.name, 'replace', () => ({ ...base, fullDocument: after }), afterDoc, raw.length)
    else
      this.emit(
        coll.db,
        coll.name,
        'update',
        () => ({
          ...base,
          get updateDescription() {
            return topLevelDiff(before, after)
          },
        }),
        afterDoc,
        2 * raw.length,
      )
  }

  deleted(coll: Collection, doc: Doc): void {
    const fields = { ns: { db: coll.db, coll: coll.name }, documentKey: { _id: doc._id } }
    this.emit(coll.db, coll.name, 'delete', () => fields)
  }

  collectionCreated(): void {}
  indexCreated(): void {}
  indexDropped(): void {}

  collectionDropped(db: string, name: string): void {
    const fields = { ns: { db, coll: name } }
    this.emit(db, name, 'drop', () => fields)
  }

  databaseDropped(db: string): void {
    const fields = { ns: { db } }
    this.emit(db, undefined, 'dropDatabase', () => fields)
  }

  collectionRenamed(fromDb: string, fromName: string, coll: Collection): void {
    const fields = { ns: { db: fromDb, coll: fromName }, to: { db: coll.db, coll: coll.name } }
    this.emit(fromDb, fromName, 'rename', () => fields)
  }

  /** The first event after position `seq` (sequence numbers are contiguous in the history). */
  private after(seq: number): ChangeEvent | undefined {
    if (this.events.length === 0) return undefined
    return this.events[Math.max(0, seq + 1 - this.events[0].seq)]
  }

  private startPosition(spec: Doc): number {
    const resume = spec.resumeAfter ?? spec.startAfter
    let position = this.seq
    if (resume !== undefined) position = seqOf(resume)
    else if (spec.startAtOperationTime instanceof Timestamp) {
      const at = spec.startAtOperationTime
      const first = this.events.find((e) => e.clusterTime.greaterThanOrEqual(at))
      position = first ? first.seq - 1 : this.seq
    }
    const oldest = this.events.length ? this.events[0].seq - 1 : this.seq
    if (position < oldest || position > this.seq) {
      throw new MongoServerError(
        286,
        'Resume of change stream was not possible, as the resume point may no longer be in the oplog.',
      )
    }
    return position
  }

  open(db: string, collection: string | undefined, pipeline: Doc[]): CursorSource {
    const spec = pipeline[0].$changeStream
    if (!isPlainObject(spec)) throw mongoError('TypeMismatch', '$changeStream must be an object')
    if (spec.fullDocumentBeforeChange !== undefined && spec.fullDocumentBeforeChange !== 'off')
      throw notSupported('fullDocumentBeforeChange')
    if (spec.allChangesForCluster === true || spec.showExpandedEvents === true)
      throw notSupported(
        `$changeStream option ${spec.allChangesForCluster ? 'allChangesForCluster' : 'showExpandedEvents'}`,
      )
    const rest = pipeline.slice(1)
    const kindFilter = operationTypeFilter(rest[0])
    for (const stage of rest) {
      const name = Object.keys(stage)[0]
      if (!STAGES_AFTER_CHANGE_STREAM.has(name))
        throw mongoError('IllegalOperation', `${name} is not permitted in a $changeStream pipeline`)
    }
    const fullDocument = spec.fullDocument ?? 'default'
    const wholeDb = collection === undefined
    let position = this.startPosition(spec)
    let invalidated = false
    const feed = this
    const relevant = (e: ChangeEvent) =>
      e.db === db && (wholeDb || e.coll === collection || (e.coll === undefined && e.operationType === 'dropDatabase'))
    const shape = (e: ChangeEvent): Doc[] => {
      const event = ChangeFeed.shown(e)
      if (event.operationType === 'update' && fullDocument !== 'default') event.fullDocument = e.after?.() ?? null
      const out = [event]
      const op = event.operationType
      if ((!wholeDb && (op === 'drop' || op === 'rename')) || op === 'dropDatabase') {
        invalidated = true
        out.push({
          _id: token(e.seq),
          operationType: 'invalidate',
          clusterTime: event.clusterTime,
          wallTime: event.wallTime,
        })
      }
      if (rest.length === 0) return out
      try {
        return new Aggregator(rest, MINGO_OPTIONS).run(out) as Doc[]
      } catch (error) {
        throw toMongoError(error)
      }
    }
    let queue: Doc[] = []
    return {
      next(): IteratorResult<Uint8Array> {
        while (queue.length === 0) {
          if (invalidated) return { done: true, value: undefined }
          const e = feed.after(position)
          if (!e) return { done: true, value: undefined }
          position = e.seq
          // a drop or rename is always shaped: it invalidates the stream even if the filter drops it
          if (relevant(e) && (!DATA_CHANGES.has(e.operationType) || kindFilter(e.operationType))) queue = shape(e)
        }
        // a spread makes the fields made on demand first: encode is not reentrant (the diff encodes)
        return { done: false, value: encode({ ...(queue.shift() as Doc) }) }
      },
      waitForData(ms: number): Promise<void> {
        if (invalidated) return Promise.resolve()
        return new Promise((resolve) => {
          const wake = () => {
            clearTimeout(timer)
            feed.waiters.delete(wake)
            resolve()
          }
          const timer = setTimeout(wake, ms)
          feed.waiters.add(wake)
        })
      },
      replyFields: () => ({ postBatchResumeToken: token(position) }),
      exhausted: () => feed.closed || (invalidated && queue.length === 0),
    }
  }

  close(): void {
    this.closed = true
    for (const wake of [...this.waiters]) wake()
  }
}
