/**
 * The `flags` service: evaluates a project's flags for one distinct id with the stored person and
 * group properties, the way the /flags endpoint does. The HTTP handlers and the flag-attribution
 * step both go through `evaluate`. Storage failures follow flags.md §11: the database state (or
 * the hash-key overrides) is reported to the evaluator as failed, and only the flags that needed
 * it fail; the request itself still answers.
 */
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import type { GeoipLookup, GroupsReader, PersonsService, Project, WithDeadline } from '../../core/plugin-api.ts'
import {
  assignProperties,
  evaluateFlagsInSlices,
  explainFlags,
  normalizeDistinctId,
  planEvaluation,
} from './evaluator/index.ts'
import type {
  DatabaseState,
  EvaluationInput,
  EvaluationPlan,
  EvaluationResult,
  EvaluationRuntime,
  Explanation,
  Properties,
} from './evaluator/index.ts'
import { EvaluationTurns } from './evaluation-turns.ts'
import type { DefinitionsCache } from './cache.ts'
import type { ProjectDefinitions } from './project-definitions.ts'
import { loadRequestData } from './store/request-data.ts'
import { readHashKeyOverrides, writeHashKeyOverrides } from './store/hash-key-overrides.ts'

export interface FlagsRequest {
  /** A number is hashed as its JSON text (flags.md §4.1); '' is accepted (§4.5). */
  distinctId: string | number
  /** Group type name → group key. */
  groups?: Record<string, unknown> | null
  /** Merged over the stored person properties (the override wins). */
  personProperties?: Properties | null
  /** Group type name → properties, merged over the stored group properties. */
  groupProperties?: Record<string, Properties> | null
  anonDistinctId?: string | null
  deviceId?: string | null
  /** Only these flags (and what they depend on). */
  flagKeys?: string[] | null
  /** Runtime of the caller; default 'all' (every flag). null: unknown, only runtime-agnostic flags. */
  runtime?: EvaluationRuntime | null
  evaluationContexts?: string[] | null
  onlySurveyFlags?: boolean
  /** Client IP: the `$geoip_*` person properties are computed from it when the geoip plugin runs. */
  ip?: string
  now?: Date
}

/** Where a person property the flags were matched against came from. */
export type PropertySource = 'stored' | 'request' | 'geoip' | 'derived'

/** A dry run's answer: every flag explained, and the properties it used with their sources. */
export interface FlagsExplanation extends Explanation {
  /** Whether a stored person was found (null: no flag needed the database, so it was not read). */
  storedPerson: boolean | null
  /** Person property → where its value came from (geoip over request over stored; derived: distinct_id, $initial_*, metadata). */
  personSources: Record<string, PropertySource>
  /** Group type name → property → `stored` or `request`. */
  groupSources: Record<string, Record<string, PropertySource>>
}

export interface FlagsService {
  evaluate(project: Project, request: FlagsRequest): Promise<EvaluationResult>
  /** What `evaluate` answers, with each flag's reason worked out condition by condition (the admin dry run). */
  explain(project: Project, request: FlagsRequest): Promise<FlagsExplanation>
  /**
   * Flag key → value (variant, `true` or `false`) for the flags that answered; failed flags are
   * left out. What `$feature/<key>` properties hold.
   */
  evaluateValues(
    project: Project,
    distinctId: string | number,
    options?: Omit<FlagsRequest, 'distinctId'>,
  ): Promise<Record<string, boolean | string>>
  /** The project's cached definitions (read from the database on first use). */
  definitions(projectId: number): Promise<ProjectDefinitions>
  /** Re-read the project's definitions now (after writing them to MongoDB with other tools). */
  refresh(projectId: number): Promise<void>
}

/** The seven properties design.md §1 computes from the client IP for evaluation. */
const GEOIP_FOR_FLAGS = [
  'city_name',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'postal_code',
  'time_zone',
] as const

export interface FlagsServiceDeps {
  db: Db
  /** The core's `groups` service: the stored properties of the groups a request names. */
  groups: GroupsReader
  /** Stored persons; without the service no request has one (no person properties, cohorts or overrides). */
  persons?: PersonsService
  cache: DefinitionsCache
  geoip?: GeoipLookup
  databaseTimeoutMs: number
  /** The core's deadlines (`PluginApi.withDeadline`). */
  withDeadline: WithDeadline
  /** Milliseconds of regular-expression matching one request may spend (the decide option `regexBudgetMs`). */
  regexBudgetMs: number
  logger: Logger
}

/**
 * How long one request evaluates before letting other work run: long enough that an ordinary
 * request (well under a millisecond) never pauses, short enough that a health check waits for
 * a slice, not for a whole request with costly flags.
 */
const EVALUATION_SLICE_MS = 10

const clock = () => performance.now()
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))
const SLICES = { sliceMs: EVALUATION_SLICE_MS, clock, pause: nextTurn }

class DatabaseTimeout extends Error {}

const NO_OVERRIDES = { values: null, failed: false }

export class FlagsEvaluation implements FlagsService {
  private readonly turns = new EvaluationTurns(SLICES)

  constructor(private readonly deps: FlagsServiceDeps) {}

  definitions(projectId: number): Promise<ProjectDefinitions> {
    return this.deps.cache.get(projectId)
  }

  async evaluateValues(
    project: Project,
    distinctId: string | number,
    options: Omit<FlagsRequest, 'distinctId'> = {},
  ): Promise<Record<string, boolean | string>> {
    const result = await this.evaluate(project, { ...options, distinctId })
    const values: Record<string, boolean | string> = Object.create(null)
    for (const flag of result.answers)
      if (!flag.failed) values[flag.key] = flag.enabled ? (flag.variant ?? true) : false
    return values
  }

  async refresh(projectId: number): Promise<void> {
    await this.deps.cache.reload(projectId)
  }

  /** The `$geoip_*` person properties of the request's IP (none without the geoip plugin or an IP). */
  private geoipProperties(request: FlagsRequest): Properties | null {
    const location = request.ip && this.deps.geoip ? this.deps.geoip.lookup(request.ip) : undefined
    if (!location) return null
    const geoip: Properties = {}
    for (const key of GEOIP_FOR_FLAGS) if (location[key] !== undefined) geoip[`$geoip_${key}`] = location[key]
    return geoip
  }

  /** Request overrides with the GeoIP properties over them, as the flags service merges them. */
  personOverrides(request: FlagsRequest): Properties | null {
    const geoip = this.geoipProperties(request)
    if (!geoip) return request.personProperties ?? null
    return assignProperties(assignProperties({}, request.personProperties), geoip)
  }

  async evaluate(project: Project, request: FlagsRequest): Promise<EvaluationResult> {
    const input = await this.evaluationInput(project, request)
    return this.turns.run(() => evaluateFlagsInSlices(input, SLICES))
  }

  async explain(project: Project, request: FlagsRequest): Promise<FlagsExplanation> {
    const input = await this.evaluationInput(project, request)
    const explanation = explainFlags(input)
    const stored = input.database.status === 'loaded' ? input.database.person : undefined
    const geoip = this.geoipProperties(request) ?? {}
    const personSources: Record<string, PropertySource> = {}
    for (const key of Object.keys(explanation.person)) {
      personSources[key] = Object.hasOwn(geoip, key)
        ? 'geoip'
        : request.personProperties && Object.hasOwn(request.personProperties, key)
          ? 'request'
          : stored && Object.hasOwn(stored.properties, key)
            ? 'stored'
            : 'derived'
    }
    const groupSources: Record<string, Record<string, PropertySource>> = {}
    for (const [name, properties] of Object.entries(explanation.groups)) {
      const fromRequest = request.groupProperties?.[name] ?? {}
      groupSources[name] = Object.fromEntries(
        Object.keys(properties).map((key) => [key, Object.hasOwn(fromRequest, key) ? 'request' : 'stored']),
      )
    }
    return { ...explanation, storedPerson: stored === undefined ? null : stored !== null, personSources, groupSources }
  }

  /** The evaluator's input for one request: the cached definitions and what storage holds for it. */
  private async evaluationInput(project: Project, request: FlagsRequest): Promise<EvaluationInput> {
    const definitions = this.deps.cache.cached(project.id) ?? (await this.deps.cache.get(project.id))
    const personPropertyOverrides = this.personOverrides(request)
    const filters = {
      flagKeys: request.flagKeys ?? null,
      runtime: request.runtime === undefined ? ('all' as const) : request.runtime,
      evaluationContexts: request.evaluationContexts ?? null,
      onlySurveyFlags: request.onlySurveyFlags ?? false,
    }
    const distinctId = normalizeDistinctId(request.distinctId)
    const anonDistinctId = request.anonDistinctId ?? null
    const plan = planEvaluation({
      flags: definitions.flags,
      prepared: definitions.prepared,
      personPropertyOverrides,
      distinctId,
      anonDistinctId,
      ...filters,
    })
    const reads = this.database(project, plan, definitions, distinctId, request.groups ?? null)
    const [database, overrides] =
      plan.hashKeyOverrides.lookup === null
        ? [await reads, NO_OVERRIDES]
        : await Promise.all([reads, this.hashKeyOverrides(project, plan)])
    return {
      flags: definitions.flags,
      prepared: definitions.prepared,
      cohorts: definitions.cohorts,
      groupTypeMapping: definitions.groupTypeMapping,
      distinctId,
      deviceId: request.deviceId ?? null,
      anonDistinctId,
      personPropertyOverrides,
      groups: request.groups ?? null,
      groupPropertyOverrides: request.groupProperties ?? null,
      database,
      hashKeyOverrides: overrides.values,
      hashKeyOverrideFailed: overrides.failed,
      timezone: project.timezone,
      now: request.now ?? new Date(),
      budget: { clock, regexMs: this.deps.regexBudgetMs },
      ...filters,
    }
  }

  private async database(
    project: Project,
    plan: EvaluationPlan,
    definitions: ProjectDefinitions,
    distinctId: string,
    groups: Record<string, unknown> | null,
  ): Promise<DatabaseState> {
    if (!plan.needsDatabase) return { status: 'skipped' }
    const query = {
      projectId: project.id,
      distinctId,
      groups,
      groupTypeIndexes: plan.groupTypeIndexes,
      groupTypeMapping: definitions.groupTypeMapping,
      readStaticMembership: plan.databaseFlagKeys.some((key) => definitions.staticCohortFlagKeys.has(key)),
    }
    try {
      return await this.withTimeout(loadRequestData(this.deps.db, this.deps.persons, query, this.deps.groups))
    } catch (error) {
      this.deps.logger.warn(
        { err: error, project: project.id },
        'flags: the person and group data could not be read; flags that need them fail',
      )
      return error instanceof DatabaseTimeout
        ? { status: 'failed', code: 'timeout', description: 'Timeout while reading person and group data' }
        : { status: 'failed' }
    }
  }

  private async hashKeyOverrides(
    project: Project,
    plan: EvaluationPlan,
  ): Promise<{ values: Record<string, string> | null; failed: boolean }> {
    const { lookup, write } = plan.hashKeyOverrides
    if (lookup === null) return { values: null, failed: false }
    const { db, persons } = this.deps
    // overrides belong to persons: without stored persons there are none to read or write
    if (!persons) return { values: {}, failed: false }
    try {
      const read = async () => {
        if (write) await writeHashKeyOverrides({ db, persons }, project.id, write)
        return readHashKeyOverrides({ db, persons }, project.id, lookup)
      }
      return { values: await this.withTimeout(read()), failed: false }
    } catch (error) {
      this.deps.logger.warn(
        { err: error, project: project.id },
        'flags: hash key overrides could not be read or written; continuity flags fail',
      )
      return { values: null, failed: true }
    }
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    return this.deps.withDeadline(
      work,
      this.deps.databaseTimeoutMs,
      'flags database read',
      () => new DatabaseTimeout('database read timed out'),
    )
  }
}
