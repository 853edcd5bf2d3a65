/**
 * Projects and their keys. Token lookups happen on every capture request, so they are cached in
 * memory; a cached miss is kept only briefly so a project created by another process is seen soon.
 *
 * Secret keys are found by their SHA-256 digest, never by the key itself: an index lookup on the key
 * would compare the caller's bytes with stored key bytes and stop at the first difference, and the
 * time that takes depends on how much of a real key the caller guessed. A digest an attacker chooses
 * says nothing about the key behind a stored digest, and the key found is then confirmed with a
 * constant-time comparison.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Db } from 'mongodb'
import type { Project } from './plugin-api.ts'
import { keysEqual } from './admin/key.ts'
import { COLLECTIONS, nextSequence } from './model/collections.ts'

export interface ProjectDocument {
  id: number
  name: string
  api_token: string
  secret_api_token: string
  /** Hex SHA-256 of `secret_api_token`, what secret keys are looked up by. Projects stored before it existed get it on first use. */
  secret_api_token_sha256?: string
  timezone: string
  created_at: Date
}

const POSITIVE_TTL_MS = 60_000
const NEGATIVE_TTL_MS = 2_000

/** PostHog-shaped keys: `phc_` public and `phs_` secret, 43 url-safe random characters. */
const makeKey = (prefix: 'phc_' | 'phs_') => prefix + randomBytes(32).toString('base64url')

export const secretKeyDigest = (key: string): string => createHash('sha256').update(key).digest('hex')

const DIGEST_INDEX = { key: { secret_api_token_sha256: 1 }, name: 'secret_api_token_sha256' } as const

export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
    return true
  } catch {
    return false
  }
}

export function toProject(doc: ProjectDocument): Project {
  return Object.freeze({
    id: doc.id,
    name: doc.name,
    apiToken: doc.api_token,
    secretApiToken: doc.secret_api_token,
    timezone: doc.timezone,
  })
}

export class ProjectStore {
  private readonly byToken = new Map<string, { project?: Project; until: number }>()
  private readonly byIdCache = new Map<number, { project?: Project; until: number }>()
  private digestsReady?: Promise<void>

  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<ProjectDocument>(COLLECTIONS.projects)
  }

  async create(input: { name: string; timezone?: string }): Promise<Project> {
    const secret = makeKey('phs_')
    const doc: ProjectDocument = {
      id: await nextSequence(this.db, 'projects'),
      name: input.name,
      api_token: makeKey('phc_'),
      secret_api_token: secret,
      secret_api_token_sha256: secretKeyDigest(secret),
      timezone: input.timezone ?? 'UTC',
      created_at: new Date(),
    }
    await this.collection.insertOne({ ...doc })
    this.byToken.delete(doc.api_token)
    return toProject(doc)
  }

  async list(): Promise<Project[]> {
    return (
      await this.collection
        .find({}, { projection: { _id: 0 } })
        .sort({ id: 1 })
        .toArray()
    ).map(toProject)
  }

  async get(id: number): Promise<Project | undefined> {
    const doc = await this.collection.findOne({ id }, { projection: { _id: 0 } })
    return doc ? toProject(doc) : undefined
  }

  /** The project whose public token this is; cached. */
  byApiToken(token: string): Promise<Project | undefined> {
    return cachedLookup(this.byToken, token, async () => {
      const doc = await this.collection.findOne({ api_token: token }, { projection: { _id: 0 } })
      return doc ? toProject(doc) : undefined
    })
  }

  /** `get`, cached like `byApiToken`: for the queue workers, which look a project up per batch. */
  byId(id: number): Promise<Project | undefined> {
    return cachedLookup(this.byIdCache, id, () => this.get(id))
  }

  /** The project whose secret key this is: looked up by digest, confirmed in constant time. */
  async bySecretToken(token: string): Promise<Project | undefined> {
    await this.ensureSecretDigests()
    const doc = await this.collection.findOne(
      { secret_api_token_sha256: secretKeyDigest(token) },
      { projection: { _id: 0 } },
    )
    return doc && keysEqual(token, doc.secret_api_token) ? toProject(doc) : undefined
  }

  /**
   * Once per store: gives projects stored before digests existed theirs, and indexes the digests.
   * A failure (database down) is retried on the next lookup instead of being remembered.
   */
  ensureSecretDigests(): Promise<void> {
    this.digestsReady ??= this.addMissingDigests().catch((error: unknown) => {
      this.digestsReady = undefined
      throw error
    })
    return this.digestsReady
  }

  private async addMissingDigests(): Promise<void> {
    const missing = await this.collection
      .find({ secret_api_token_sha256: { $exists: false } }, { projection: { _id: 1, secret_api_token: 1 } })
      .toArray()
    for (const doc of missing) {
      await this.collection.updateOne(
        { _id: doc._id },
        { $set: { secret_api_token_sha256: secretKeyDigest(doc.secret_api_token) } },
      )
    }
    await this.collection.createIndex(DIGEST_INDEX.key, { name: DIGEST_INDEX.name })
  }
}

/** A found project is kept for a minute, a miss only briefly so a project created elsewhere is seen soon. */
async function cachedLookup<K>(
  cache: Map<K, { project?: Project; until: number }>,
  key: K,
  load: () => Promise<Project | undefined>,
): Promise<Project | undefined> {
  const now = Date.now()
  const hit = cache.get(key)
  if (hit && hit.until > now) return hit.project
  const project = await load()
  if (cache.size > 10_000) cache.clear()
  cache.set(key, { project, until: now + (project ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) })
  return project
}
