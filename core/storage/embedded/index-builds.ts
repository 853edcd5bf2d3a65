import { decode, type Doc } from './bson/codec.ts'
import { fieldPicker } from './bson/raw.ts'
import type { Catalog } from './engine/catalog.ts'
import type { Collection } from './engine/collection.ts'
import type { SecondaryIndex } from './engine/secondary-index.ts'
import { mongoError } from './errors.ts'
import type { WriteTurns } from './write-turns.ts'

/**
 * How long one chunk of a build runs (one write transaction) before the commands that arrived
 * meanwhile get their turn: a lookup waits for at most about this long.
 */
const CHUNK_MS = 4

/** The part of the store a build writes through (server.ts's Persistence). */
export interface BuildStore {
  transact<T>(fn: () => T): T
  commit(syncRequested: boolean): Promise<void>
}

type Log = (level: 'info' | 'warn' | 'error', message: string, error?: unknown) => void

/**
 * Index builds beside other commands, as MongoDB's: createIndexes registers the index (writes
 * maintain it from then on, queries do not use it), then the build scans the documents that were
 * there in natural order, a chunk of CHUNK_MS per write transaction, taking its turn among the
 * other writes (write-turns.ts) so reads and writes keep being answered. Adding an entry twice is
 * harmless (a document a write indexed may be scanned again), and a document removed before the
 * scan reaches it is skipped, so the entries end up exactly those of a build from scratch.
 *
 * The build fails, leaving no index, on a document the index cannot hold (a duplicate key of a
 * unique index, parallel arrays, a key too long), and is aborted by a drop of the index or the
 * collection. On the lmdb engine each chunk records how far it got in the same transaction: after
 * a restart the build resumes there (resume()); the in-memory engine logs an index only once built,
 * so after a restart an unfinished build is simply absent.
 */
export class IndexBuilds {
  private readonly running = new Map<SecondaryIndex, Promise<void>>()
  private closing = false

  constructor(
    private readonly catalog: Catalog,
    private readonly turns: WriteTurns,
    private readonly store: BuildStore,
    private readonly log: Log,
  ) {}

  /**
   * Builds `indexes`, just registered with catalog.startIndexBuild; resolves once they are ready.
   * `level`: of the line logged at the end (a resumed build, which nobody waits for, says it louder).
   */
  start(coll: Collection, indexes: SecondaryIndex[], level: 'info' | 'warn' = 'info'): Promise<void> {
    const started = performance.now()
    const documents = coll.size
    const build = this.run(coll, indexes).then(() => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      this.log(level, `index ${names(indexes)} on ${coll.ns} built over ${documents} documents in ${seconds} s`)
    })
    for (const ix of indexes) this.running.set(ix, build)
    const forget = () => {
      for (const ix of indexes) this.running.delete(ix)
    }
    build.then(forget, forget)
    return build
  }

  /** The build of an index being built: a second createIndexes of the same index waits for it too. */
  wait(index: SecondaryIndex): Promise<void> {
    return this.running.get(index) ?? Promise.resolve()
  }

  /** Continues the builds a restart interrupted (lmdb recorded how far each got); nobody waits for them. */
  resume(): void {
    for (const coll of this.catalog.all()) {
      const building = coll.indexes.filter((ix) => ix.building && !this.running.has(ix))
      if (building.length === 0) continue
      // warn, as the service logs only warnings and errors of the embedded server: a restart that resumes a build is worth seeing
      this.log(
        'warn',
        `resuming the build of index ${names(building)} on ${coll.ns} (${coll.size} documents), interrupted by the last stop; queries use it once built`,
      )
      this.start(coll, building, 'warn').catch((error: unknown) => {
        if (!this.closing) this.log('error', `the build of index ${names(building)} on ${coll.ns} failed`, error)
      })
    }
  }

  /** Stops every build at its next chunk (lmdb resumes them at the next start) and waits for them. */
  async close(): Promise<void> {
    this.closing = true
    await Promise.allSettled([...this.running.values()])
  }

  private async run(coll: Collection, indexes: SecondaryIndex[]): Promise<void> {
    const from = Math.min(...indexes.map((ix) => ix.building?.position ?? 0))
    const docs = coll.scan(from)[Symbol.iterator]()
    const partial = indexes.some((ix) => ix.spec.partialFilterExpression)
    const pick = fieldPicker(new Set(indexes.flatMap((ix) => ix.topLevelFields)))
    // a partial filter may read any field; otherwise only the top-level fields the indexes read are decoded
    const read = (raw: Buffer): Doc => decode(partial ? raw : pick(raw))
    for (;;) {
      await this.turns.next()
      let done: boolean
      try {
        done = this.store.transact(() => this.chunk(coll, indexes, docs, read))
      } finally {
        this.turns.done()
      }
      await this.store.commit(false)
      if (done) return
    }
  }

  /** One transaction's worth of the scan; true once every document is indexed and the indexes are ready. */
  private chunk(
    coll: Collection,
    indexes: SecondaryIndex[],
    docs: Iterator<{ id: string; position: number }>,
    read: (raw: Buffer) => Doc,
  ): boolean {
    this.checkAborted(coll, indexes)
    const deadline = performance.now() + CHUNK_MS
    try {
      const failure = indexes.find((ix) => ix.building?.failure)?.building?.failure
      if (failure) throw failure
      for (;;) {
        const next = docs.next()
        if (next.done) {
          for (const ix of indexes) this.catalog.finishIndexBuild(coll, ix)
          return true
        }
        const { id, position } = next.value
        const raw = coll.raw(id)
        if (raw) {
          const doc = read(raw)
          for (const ix of indexes) {
            const keys = ix.keysOf(doc)
            ix.checkKeys(id, keys)
            const duplicate = ix.duplicateError(id, keys)
            if (duplicate) throw duplicate
            ix.add(id, keys)
          }
        }
        for (const ix of indexes) if (ix.building) ix.building.position = position
        if (performance.now() >= deadline) break
      }
    } catch (error) {
      // MongoDB leaves no index of a failed build: the others built with it go too
      for (const ix of indexes) if (coll.indexes.includes(ix)) this.catalog.dropIndex(coll, ix.name)
      throw error
    }
    this.catalog.indexBuildProgress(coll)
    return false
  }

  /** Throws if the build must stop here: shutting down (resumed later), or its collection or an index dropped. */
  private checkAborted(coll: Collection, indexes: SecondaryIndex[]): void {
    if (this.closing) throw mongoError('InterruptedAtShutdown', 'interrupted at shutdown')
    if (this.catalog.get(coll.db, coll.name) !== coll)
      throw mongoError('IndexBuildAborted', `Index build aborted: collection ${coll.ns} was dropped`)
    const dropped = indexes.find((ix) => !coll.indexes.includes(ix))
    if (!dropped) return
    for (const ix of indexes) if (coll.indexes.includes(ix)) this.catalog.dropIndex(coll, ix.name)
    throw mongoError('IndexBuildAborted', `Index build aborted: index ${dropped.name} on ${coll.ns} was dropped`)
  }
}

function names(indexes: SecondaryIndex[]): string {
  return indexes.map((ix) => ix.name).join(', ')
}
