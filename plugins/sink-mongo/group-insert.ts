/**
 * Group commit: the events of the capture requests that reach the sink while the previous insert
 * is still in flight (or, when none is, in the same turn of the event loop) go to the database in
 * one unordered insertMany, so concurrent requests share one command and one journal write. A
 * group of 100 documents or more (a batch request) is sent on the next turn without waiting. A
 * command costs the service about the same CPU whatever its size (the driver, and a socket write
 * that runs the loopback TCP stack), so under load fewer, larger
 * commands is what pays; with no insert in flight a request waits for nothing but its own turn.
 * Each request still learns the fate of its own events: it fails only if one of its documents
 * failed (or the database could not be reached).
 *
 * A document the driver refuses before sending anything (one over the size limit makes it throw
 * a RangeError or an invalid-argument error, not a bulk write error) fails the command for every
 * request in it. The group is then split in halves and each half sent again, down to the request
 * that holds the document, which alone fails: with a 413 when the document is too large to store.
 */
import { MongoBulkWriteError, MongoServerError } from 'mongodb'
import type { Collection, WriteConcernSettings } from 'mongodb'
import type { EventDocument } from '../../core/plugin-api.ts'
import { tooLargeToStore } from './document.ts'
import { isDuplicateKey, isRetryable } from '../../core/plugin-api.ts'

/** Documents per command; more events than this waiting are sent at once, in flight or not. */
const MAX_DOCUMENTS = 5_000
/** Inserts in flight at once for small groups: the next group collects while this many wait for the database. */
const MAX_IN_FLIGHT = 1
/**
 * A group this large goes on the next turn even with an insert in flight: the command's cost is
 * already spread over its documents, and holding a batch request back would only leave the
 * database idle while the service waits for it (a closed loop of clients stalls).
 */
const SEND_WITHOUT_WAITING = 100

interface Waiting {
  readonly docs: EventDocument[]
  resolve(): void
  reject(error: unknown): void
}

export class GroupInsert {
  private queue: Waiting[] = []
  private queued = 0
  private inFlight = 0
  private scheduled = false

  constructor(
    private readonly collection: Collection<EventDocument>,
    private readonly writeConcern: WriteConcernSettings,
  ) {}

  /** Resolves once every document is stored or was already stored (the same (project_id, uuid)). */
  insert(docs: EventDocument[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ docs, resolve, reject })
      this.queued += docs.length
      if (this.queued >= MAX_DOCUMENTS) this.flush()
      else this.schedule()
    })
  }

  /** Sends the queue on the next turn, unless it is small and an insert in flight will send it when it ends. */
  private schedule(): void {
    if (this.scheduled || !this.queue.length || !this.mayFlush()) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.mayFlush()) this.flush()
    })
  }

  private mayFlush(): boolean {
    return this.inFlight < MAX_IN_FLIGHT || this.queued >= SEND_WITHOUT_WAITING
  }

  private flush(): void {
    const group = this.queue
    this.queue = []
    this.queued = 0
    if (!group.length) return
    this.inFlight++
    void this.send(group)
      // send settles every request itself; should it ever throw, no request may be left waiting
      .catch((error: unknown) => group.forEach((waiting) => waiting.reject(error)))
      .finally(() => {
        this.inFlight--
        this.schedule()
      })
  }

  private async send(group: Waiting[]): Promise<void> {
    const docs = group.length === 1 ? group[0]!.docs : group.flatMap((waiting) => waiting.docs)
    try {
      await this.collection.insertMany(docs, { ordered: false, writeConcern: this.writeConcern })
      for (const waiting of group) waiting.resolve()
    } catch (error) {
      if (error instanceof MongoBulkWriteError) return settleEach(group, error)
      const documentFault = refusedBeforeSending(error)
      if (documentFault && group.length > 1) return this.sendHalves(group)
      for (const waiting of group) waiting.reject(documentFault ? (tooLargeToStore(waiting.docs) ?? error) : error)
    }
  }

  /** Documents already stored by the failed command, if any, count as stored when sent again (the unique index). */
  private async sendHalves(group: Waiting[]): Promise<void> {
    const middle = Math.ceil(group.length / 2)
    await Promise.all([this.send(group.slice(0, middle)), this.send(group.slice(middle))])
  }
}

/**
 * Whether the driver refused the command for one of its documents before sending it (a document
 * over the size limit, one it cannot serialise): the same documents fail the same way every time.
 * Not the database's answer (a server error), nor a connection problem.
 */
function refusedBeforeSending(error: unknown): boolean {
  return !(error instanceof MongoServerError) && !isRetryable(error)
}

/** After a bulk write error: each request fails only if one of its own documents did. */
function settleEach(group: readonly Waiting[], error: MongoBulkWriteError): void {
  const failed = failedIndexes(error)
  let offset = 0
  for (const waiting of group) {
    const end = offset + waiting.docs.length
    if (!failed) waiting.reject(error)
    else if (failed.some((index) => index >= offset && index < end)) waiting.reject(error)
    else waiting.resolve()
    offset = end
  }
}

/**
 * The indexes of the documents that failed for a reason other than already being stored, or
 * undefined when the command as a whole failed (network, write concern): then no document is
 * known to be stored.
 */
function failedIndexes(error: unknown): number[] | undefined {
  if (!(error instanceof MongoBulkWriteError)) return undefined
  const writeErrors = [error.writeErrors].flat()
  if (!writeErrors.length || error.result?.getWriteConcernError()) return undefined
  return writeErrors.filter((e) => !isDuplicateKey(e)).map((e) => e.index)
}
