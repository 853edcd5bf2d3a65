/**
 * Projects and their keys. Token lookups happen on every capture request, so they are cached in
 * memory; a cached miss is kept only briefly so a project created by another process is seen soon.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from 'mongodb'
import type { Project } from './plugin-api.ts'
import { COLLECTIONS, nextSequence } from './storage/collections.ts'

export interface ProjectDocument {
  id: number
  name: string
  api_token: string
  secret_api_token: string
  timezone: string
  created_at: Date
}

const POSITIVE_TTL_MS = 60_000
const NEGATIVE_TTL_MS = 2_000

/** PostHog-shaped keys: `phc_` public and `phs_` secret, 43 url-safe random characters. */
const makeKey = (prefix: 'phc_' | 'phs_') => prefix + randomBytes(32).toString('base64url')

export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
    return true
  } catch {
    return false
  }
}

export function toProject(doc: ProjectDocument): Project {
  return Object.freeze({ id: doc.id, name: doc.name, apiToken: doc.api_token, secretApiToken: doc.secret_api_token, timezone: doc.timezone })
}

export class ProjectStore {
  private readonly byToken = new Map<string, { project?: Project; until: number }>()

  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<ProjectDocument>(COLLECTIONS.projects)
  }

  async create(input: { name: string; timezone?: string }): Promise<Project> {
    const doc: ProjectDocument = {
      id: await nextSequence(this.db, 'projects'),
      name: input.name,
      api_token: makeKey('phc_'),
      secret_api_token: makeKey('phs_'),
      timezone: input.timezone ?? 'UTC',
      created_at: new Date(),
    }
    await this.collection.insertOne({ ...doc })
    this.byToken.delete(doc.api_token)
    return toProject(doc)
  }

  async list(): Promise<Project[]> {
    return (await this.collection.find({}, { projection: { _id: 0 } }).sort({ id: 1 }).toArray()).map(toProject)
  }

  async get(id: number): Promise<Project | undefined> {
    const doc = await this.collection.findOne({ id }, { projection: { _id: 0 } })
    return doc ? toProject(doc) : undefined
  }

  /** The project whose public token this is; cached. */
  async byApiToken(token: string): Promise<Project | undefined> {
    const now = Date.now()
    const hit = this.byToken.get(token)
    if (hit && hit.until > now) return hit.project
    const doc = await this.collection.findOne({ api_token: token }, { projection: { _id: 0 } })
    const project = doc ? toProject(doc) : undefined
    if (this.byToken.size > 10_000) this.byToken.clear()
    this.byToken.set(token, { project, until: now + (project ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) })
    return project
  }

  async bySecretToken(token: string): Promise<Project | undefined> {
    const doc = await this.collection.findOne({ secret_api_token: token }, { projection: { _id: 0 } })
    return doc ? toProject(doc) : undefined
  }
}
