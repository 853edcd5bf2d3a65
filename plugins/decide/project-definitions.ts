/**
 * One project's definitions as cached: the stored documents, the evaluator's view of them, and the
 * local-evaluation body with its ETag (built on first use, once per version).
 */
import { createHash } from 'node:crypto'
import { prepareFlags } from './evaluator/index.ts'
import type { CohortDefinition, FlagDefinition, PreparedFlags } from './evaluator/index.ts'
import { toCohortDefinition, toFlagDefinition } from './store/definitions.ts'
import type { StoredDefinitions } from './store/definitions.ts'
import type { CohortDocument, FlagDocument } from './store/documents.ts'
import { cohortClosure, toSdkDefinitions } from './sdk-format.ts'

export interface SdkBody {
  /** The JSON text served to SDKs. */
  json: string
  /** Weak validator of `json`, as PostHog sends it. */
  etag: string
}

export class ProjectDefinitions {
  readonly generation: number
  readonly version: number
  readonly flagDocuments: readonly FlagDocument[]
  readonly cohortDocuments: readonly CohortDocument[]
  readonly groupTypeMapping: Readonly<Record<string, string>>
  /** Evaluator input: every stored flag (the evaluator leaves inactive and deleted ones out itself). */
  readonly flags: FlagDefinition[]
  readonly cohorts: CohortDefinition[]
  /** What the evaluator derives from `flags` alone, built once per version instead of per request. */
  readonly prepared: PreparedFlags
  /** Flags whose cohorts reach a static cohort: only requests evaluating one read static membership. */
  readonly staticCohortFlagKeys: ReadonlySet<string>
  private sdk: SdkBody | undefined

  constructor(
    readonly projectId: number,
    stored: StoredDefinitions,
  ) {
    this.generation = stored.generation
    this.version = stored.version
    this.flagDocuments = stored.flags
    this.cohortDocuments = stored.cohorts
    this.groupTypeMapping = stored.groupTypeMapping
    this.flags = stored.flags.map((doc) => toFlagDefinition(doc, projectId))
    this.cohorts = stored.cohorts.filter((doc) => !doc.deleted).map(toCohortDefinition)
    this.prepared = prepareFlags(this.flags)
    const hasStatic = stored.cohorts.some((doc) => doc.is_static && !doc.deleted)
    this.staticCohortFlagKeys = new Set(
      hasStatic
        ? stored.flags
            .filter((flag) => cohortClosure([flag], stored.cohorts).some((cohort) => cohort.is_static))
            .map((flag) => flag.key)
        : [],
    )
  }

  /** Whether any flag would be evaluated (remote config's `hasFeatureFlags`). */
  get hasActiveFlags(): boolean {
    return this.flagDocuments.some((flag) => flag.active && !flag.deleted)
  }

  /** The live, non-deleted flag with this key. */
  flagByKey(key: string): FlagDocument | undefined {
    return this.flagDocuments.find((flag) => flag.key === key && !flag.deleted)
  }

  sameGroupTypes(mapping: Record<string, string>): boolean {
    const mine = Object.entries(this.groupTypeMapping)
    return mine.length === Object.keys(mapping).length && mine.every(([index, name]) => mapping[index] === name)
  }

  sdkBody(): SdkBody {
    if (!this.sdk) {
      const json = JSON.stringify(
        toSdkDefinitions(this.projectId, [...this.flagDocuments], [...this.cohortDocuments], {
          ...this.groupTypeMapping,
        }),
      )
      this.sdk = { json, etag: `W/"${createHash('sha1').update(json).digest('hex')}"` }
    }
    return this.sdk
  }
}
