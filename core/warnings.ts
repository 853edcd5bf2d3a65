/**
 * Ingestion warnings (capture.md §2.13): every drop and every soft problem of an event, written to
 * the `ingestion_warnings` collection where operators read them through the admin API, and counted.
 */
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import { COLLECTIONS } from './storage/collections.ts'
import { count } from './metrics.ts'

export interface IngestionWarning {
  project_id: number
  type: string
  created_at: Date
  details: Record<string, unknown>
  event?: unknown
}

/** Collects a request's warnings and writes them in one insert. */
export class WarningBatch {
  private readonly warnings: IngestionWarning[] = []

  constructor(private readonly projectId: number) {}

  add(type: string, details: Record<string, unknown> = {}, event?: unknown): void {
    count('hedgerow_ingestion_warnings_total', { type })
    this.warnings.push({ project_id: this.projectId, type, created_at: new Date(), details, event })
  }

  get size(): number {
    return this.warnings.length
  }

  /** Best effort: a warning that cannot be written is logged, never a reason to fail the request. */
  async flush(db: Db, logger: Logger): Promise<void> {
    if (!this.warnings.length) return
    try {
      await db.collection(COLLECTIONS.ingestionWarnings).insertMany(this.warnings, { ordered: false })
    } catch (error) {
      logger.error({ err: error, warnings: this.warnings.length }, 'could not store ingestion warnings')
    }
  }
}
