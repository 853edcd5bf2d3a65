/**
 * decide: PostHog's feature-flag endpoints over definitions stored in MongoDB. Mounts
 * /flags and /decide (every response shape), remote config for posthog-js (/array/:token/config),
 * local-evaluation definitions for server SDKs (/flags/definitions and its older /api path), and
 * the admin API for definitions, flags and cohorts. Provides the `flags` service. See README.md.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { GeoipLookup, PersonsService, PluginApi } from '../../core/plugin-api.ts'
import { DefinitionsCache } from './cache.ts'
import { DefinitionsReader } from './store/definitions.ts'
import { ensureDecideIndexes } from './store/documents.ts'
import { Generations } from './store/generations.ts'
import { FlagsEvaluation } from './service.ts'
import { BACKTRACKING_MATCH_LIMIT_MS } from './evaluator/index.ts'
import { DEFAULT_REGEX_BUDGET_MS } from './definitions/regex-limit.ts'
import type { FlagsService } from './service.ts'
import { mountFlagsRoutes } from './http/flags-routes.ts'
import { mountRemoteConfig } from './http/remote-config.ts'
import { mountDefinitionsRoutes } from './http/definitions-routes.ts'
import { mountDefinitionRoutes } from './http/admin-definitions.ts'
import { mountFlagRoutes } from './http/admin-flags.ts'
import { mountEvaluateRoute } from './http/admin-evaluate.ts'
import { mountCohortRoutes } from './http/admin-cohorts.ts'
import { mountOfrepRoutes } from './http/ofrep-routes.ts'
import { DefinitionEventStreams } from './ofrep/event-stream.ts'

declare module '../../core/plugin-api.ts' {
  interface Services {
    /** Evaluates a project's flags for a distinct id with stored properties (plugins/decide/service.ts). */
    flags: FlagsService
  }
}

export const optionsSchema = Type.Object(
  {
    /** How often cached definitions are checked against the database (changes made by other processes). */
    pollIntervalMs: Type.Integer({ minimum: 50, default: 1000 }),
    /** Projects whose definitions are kept in memory; the oldest is dropped beyond this. */
    maxCachedProjects: Type.Integer({ minimum: 1, default: 10_000 }),
    /** Reading a request's person and groups longer than this fails the flags that need them (§11). */
    databaseTimeoutMs: Type.Integer({ minimum: 1, default: 2000 }),
    /**
     * Milliseconds of regular-expression matching one flags request may spend; flags whose patterns
     * find none left fail (`timeout`). Definitions with more look-around/back-reference filters
     * than it has room for at 10 ms each are refused (definitions/regex-limit.ts).
     */
    regexBudgetMs: Type.Integer({ minimum: BACKTRACKING_MATCH_LIMIT_MS, default: DEFAULT_REGEX_BUDGET_MS }),
    /** Log, at info, what each loaded version of a project's flags compiled to (for debugging evaluation). */
    printCompiledFlags: Type.Boolean({ default: false }),
    /** Wire size of a /flags or /decide body. */
    requestBodyLimitBytes: Type.Integer({ minimum: 1024, default: 2 * 1024 * 1024 }),
    /** Size of a /flags or /decide body once decompressed. */
    requestDecodedLimitBytes: Type.Integer({ minimum: 1024, default: 20 * 1024 * 1024 }),
    /** Size of an admin API body (a whole project's definitions for PUT flag_definitions). */
    adminBodyLimitBytes: Type.Integer({ minimum: 1024, default: 50 * 1024 * 1024 }),
    /** OFREP evaluations per second per project (a token bucket, as capture's rate limit); unset: no limit. */
    ofrepRateLimit: Type.Optional(
      Type.Object(
        { requestsPerSecond: Type.Number({ exclusiveMinimum: 0 }), burst: Type.Optional(Type.Integer({ minimum: 1 })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

/** The `geoip` service when a plugin before this one provides it (geoip, or its replacement); else flags get no `$geoip_*`. */
function optionalGeoip(api: PluginApi): GeoipLookup | undefined {
  try {
    return api.use('geoip')
  } catch {
    api.logger.info('no geoip service: flags requests get no $geoip_* person properties')
    return undefined
  }
}

/** The persons of the `persons` plugin when it runs before this one; otherwise no request has a stored person. */
function optionalPersons(api: PluginApi): PersonsService | undefined {
  try {
    return api.use('persons')
  } catch {
    api.logger.warn(
      'no persons service: flags read no stored person properties, static cohorts or hash key overrides; enable the "persons" plugin before decide to read them',
    )
    return undefined
  }
}

export default definePlugin({
  name: 'decide',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    await ensureDecideIndexes(api.db)
    const groups = api.use('groups')
    const reader = new DefinitionsReader(api.db, groups)
    const cache = new DefinitionsCache(
      reader,
      new Generations(api.db),
      {
        pollIntervalMs: options.pollIntervalMs,
        maxProjects: options.maxCachedProjects,
        printCompiledFlags: options.printCompiledFlags,
      },
      api.logger,
    )
    const flags = new FlagsEvaluation({
      db: api.db,
      groups,
      persons: optionalPersons(api),
      cache,
      geoip: optionalGeoip(api),
      databaseTimeoutMs: options.databaseTimeoutMs,
      withDeadline: api.withDeadline,
      regexBudgetMs: options.regexBudgetMs,
      logger: api.logger,
    })
    api.provide('flags', flags)
    const admin = {
      db: api.db,
      http: api.http,
      flags,
      audit: api.audit,
      bodyLimit: options.adminBodyLimitBytes,
      regexBudgetMs: options.regexBudgetMs,
    }
    const streams = new DefinitionEventStreams(cache, api.logger)
    streams.watch(api.db)
    api.hooks.closing.tap({ name: api.id }, () => streams.close())
    api.hooks.routes.tap({ name: api.id }, (router) => {
      const limits = { maxBodyBytes: options.requestBodyLimitBytes, maxDecodedBytes: options.requestDecodedLimitBytes }
      mountFlagsRoutes(router, { projects: api.projects, http: api.http, flags, limits })
      const rate = options.ofrepRateLimit
      mountOfrepRoutes(router, {
        projects: api.projects,
        http: api.http,
        flags,
        limits,
        rateLimiter: rate && api.http.rateLimiter(rate.requestsPerSecond, rate.burst),
        minPollingIntervalMs: options.pollIntervalMs,
        streams,
      })
      mountRemoteConfig(router, api.projects, flags)
      mountDefinitionsRoutes(router, api, flags)
      mountDefinitionRoutes(router, admin)
      mountEvaluateRoute(router, admin)
      mountFlagRoutes(router, admin)
      mountCohortRoutes(router, admin)
    })
    cache.start()
    return () => {
      streams.close()
      cache.stop()
    }
  },
})
