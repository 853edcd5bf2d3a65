/**
 * Single-flag and single-cohort edits (the REST API). Each writes one document of the live
 * generation and then bumps the project's version only if that generation is still live; when a
 * replacement went live in between, the edit is made again on the new generation (generations.ts).
 * Concurrent edits of one document are serialised by its `version`: a replace that finds another
 * version reads again.
 */
import type { Collection, Db } from 'mongodb'
import { contentionError, httpError, isDuplicateKey } from '../../../core/plugin-api.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { CohortDocument, FlagDocument } from './documents.ts'
import { Generations } from './generations.ts'

const ATTEMPTS = 8

type Definition = FlagDocument | CohortDocument

export const notFound = (what: string, id: number | string) => httpError('not_found', `no ${what} with id ${id}`, 'id')

export class DefinitionEdits<D extends Definition> {
  private readonly generations: Generations

  constructor(
    db: Db,
    private readonly collection: Collection<D>,
    private readonly what: string,
  ) {
    this.generations = new Generations(db)
  }

  static flags(db: Db): DefinitionEdits<FlagDocument> {
    return new DefinitionEdits(db, db.collection<FlagDocument>(DECIDE_COLLECTIONS.flags), 'feature flag')
  }

  static cohorts(db: Db): DefinitionEdits<CohortDocument> {
    return new DefinitionEdits(db, db.collection<CohortDocument>(DECIDE_COLLECTIONS.cohorts), 'cohort')
  }

  /** Runs `write` against the live generation until the version bump confirms it stayed live. */
  private async inLiveGeneration<T>(projectId: number, write: (generation: number) => Promise<T>): Promise<T> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { generation } = await this.generations.live(projectId)
      const result = await write(generation)
      if (await this.generations.bump(projectId, generation)) return result
    }
    throw contentionError(`editing a ${this.what}`)
  }

  /**
   * Inserts the document `build` makes for the next free id. `build` may throw (a duplicate key
   * is a 400 found by reading `existing`).
   */
  async create(
    projectId: number,
    build: (id: number, existing: D[]) => Omit<D, 'project_id' | 'generation'>,
  ): Promise<D> {
    return this.inLiveGeneration(projectId, async (generation) => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const existing = (await this.collection.find({ project_id: projectId, generation } as never).toArray()) as D[]
        const id = existing.reduce((max, doc) => Math.max(max, doc.id), 0) + 1
        const doc = { ...build(id, existing), project_id: projectId, generation } as D
        try {
          await this.collection.insertOne(doc as never)
          return doc
        } catch (error) {
          if (!isDuplicateKey(error)) throw error // another creation took this id: take the next
        }
      }
      throw contentionError(`creating a ${this.what}`)
    })
  }

  async get(projectId: number, id: number): Promise<D> {
    const { generation } = await this.generations.live(projectId)
    const doc = (await this.collection.findOne({ project_id: projectId, generation, id } as never)) as D | null
    if (!doc) throw notFound(this.what, id)
    return doc
  }

  /** Replaces the document with what `change` makes of it (it may throw, e.g. 400 or 409). */
  async update(
    projectId: number,
    id: number,
    change: (doc: D, siblings: () => Promise<D[]>) => Promise<D> | D,
  ): Promise<D> {
    return this.inLiveGeneration(projectId, async (generation) => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const current = (await this.collection.findOne({ project_id: projectId, generation, id } as never)) as D | null
        if (!current) throw notFound(this.what, id)
        const siblings = async () =>
          (await this.collection.find({ project_id: projectId, generation } as never).toArray()) as D[]
        const next = {
          ...(await change(current, siblings)),
          project_id: projectId,
          generation,
          id,
          version: current.version + 1,
        } as D
        const { _id, ...replacement } = next as D & { _id?: unknown }
        const result = await this.collection.replaceOne(
          { project_id: projectId, generation, id, version: current.version } as never,
          replacement as never,
        )
        if (result.matchedCount === 1) return replacement as D
      }
      throw contentionError(`updating a ${this.what}`)
    })
  }
}
