/**
 * Loads the configured plugins in order: resolve → import → shape and API version check →
 * options check (defaults applied) → setup under a timeout. Any failure stops boot with a message
 * naming the plugin, unless its entry is `optional`, in which case it is logged and its taps are
 * removed. Setups run one at a time so the hooks know whose taps they see (core/hooks.ts).
 */
import type { Hook } from 'tapable'
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import { API_VERSION } from './plugin-api.ts'
import type {
  AuditLog,
  IngestHooks,
  NatsConnectionSettings,
  PluginApi,
  PluginDefinition,
  ProjectLookup,
  ServiceName,
  Services,
  Teardown,
} from './plugin-api.ts'
import type { PluginEntry } from './config.ts'
import { ConfigError, checkSchema } from './config.ts'
import { tapOnly } from './hooks.ts'
import type { SetupScope, TapOwner } from './hooks.ts'
import { describeSource, importUrl, resolvePlugin } from './plugin-resolve.ts'
import { applyRenames } from './plugin-renames.ts'
import type { PluginRename } from './plugin-renames.ts'
import { withDeadline } from './deadlines.ts'
import { count } from './metrics.ts'
import { batching } from './model/batching.ts'
import { connectNats } from './nats.ts'
import { createHttpKit } from './http/kit.ts'
import type { PluginSource } from './plugin-resolve.ts'
import { MongoAuditLog } from './admin/audit.ts'

export class PluginLoadError extends Error {
  constructor(
    readonly plugin: string,
    readonly code: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`plugin "${plugin}" failed to load (${code}): ${reason}`, options)
    this.name = 'PluginLoadError'
  }
}

export interface LoadedPlugin {
  readonly id: string
  readonly source: string
  readonly tapped: readonly string[]
  /** Its options as checked, defaults applied (the admin API shows them, secrets masked). */
  readonly options?: unknown
  readonly required?: boolean
  readonly teardown?: Teardown
}

export interface LoaderContext {
  readonly hooks: IngestHooks
  /** Set to the plugin whose setup runs, so that its taps are its own. */
  readonly scope: SetupScope
  readonly db: Db
  readonly projects: ProjectLookup
  readonly isAdminKey: (token: string) => boolean
  /** The label of the admin key `token` is, for the audit log; without it every admin key is "admin". */
  readonly adminKeyLabel?: (token: string) => string | undefined
  /** The admin API's audit log; one over `db` when not given. */
  readonly audit?: AuditLog
  readonly logger: Logger
  readonly builtIns: Readonly<Record<string, PluginDefinition>>
  /** Old names of built-ins, loaded as the plugin they became (core/plugin-renames.ts). */
  readonly renamed?: Readonly<Record<string, PluginRename>>
  readonly rootDir: string
  readonly configDir: string
  readonly dataDir: string
  readonly setupTimeoutMs: number
  /**
   * The service registry: holds the services the core provides (`groups`) before any plugin is
   * set up, and the plugins' own once they are, for the core to read (`events`, for the admin API).
   */
  readonly services?: Map<string, unknown>
}

async function importDefinition(source: PluginSource, ctx: LoaderContext, id: string): Promise<unknown> {
  if (source.kind === 'built-in') return ctx.builtIns[source.name]
  try {
    const mod = (await import(importUrl(source))) as {
      default?: { plugin?: unknown; setup?: unknown }
      plugin?: unknown
    }
    // ESM default export, ESM/CJS named `plugin`, or a CJS `exports.plugin` seen through `default`
    if (typeof mod.default?.setup === 'function') return mod.default
    return mod.plugin ?? mod.default?.plugin ?? mod.default
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND'
    const code = missing ? 'INGEST_ERR_PLUGIN_DEPENDENCY_MISSING' : 'INGEST_ERR_PLUGIN_IMPORT'
    throw new PluginLoadError(id, code, `importing ${describeSource(source)} threw: ${(error as Error).message}`, {
      cause: error,
    })
  }
}

function checkShape(value: unknown, id: string): PluginDefinition {
  const def = value as Partial<PluginDefinition> | undefined
  if (!def || typeof def !== 'object' || typeof def.name !== 'string' || typeof def.setup !== 'function') {
    throw new PluginLoadError(
      id,
      'INGEST_ERR_PLUGIN_INVALID',
      'the module must export (default or `plugin`) an object with a string `name` and a `setup` function',
    )
  }
  if (def.apiVersion !== API_VERSION) {
    throw new PluginLoadError(
      id,
      'INGEST_ERR_PLUGIN_API_MISMATCH',
      `it targets plugin API version ${String(def.apiVersion)}, this service provides ${API_VERSION}`,
    )
  }
  return def as PluginDefinition
}

function removeTaps(hooks: IngestHooks, id: string): void {
  // Safe only at boot: no hook has been called yet, so tapable has compiled nothing from `taps`.
  for (const hook of Object.values(hooks) as Hook<unknown, unknown>[])
    hook.taps = hook.taps.filter((t) => t.name !== id)
}

async function runSetup(
  def: PluginDefinition,
  api: PluginApi,
  options: unknown,
  ctx: LoaderContext,
  owner: TapOwner,
): Promise<Teardown | undefined> {
  ctx.scope.owner = owner
  try {
    const setup = Promise.resolve().then(() => def.setup(api, options as never))
    const tooSlow = () => new Error(`setup did not finish within ${ctx.setupTimeoutMs} ms`)
    const result = await withDeadline(setup, ctx.setupTimeoutMs, `${api.id} setup`, tooSlow)
    return typeof result === 'function' ? result : undefined
  } catch (error) {
    throw new PluginLoadError(api.id, 'INGEST_ERR_PLUGIN_SETUP', (error as Error).message, { cause: error })
  } finally {
    ctx.scope.owner = undefined
  }
}

export async function loadPlugins(entries: readonly PluginEntry[], ctx: LoaderContext): Promise<LoadedPlugin[]> {
  const services = ctx.services ?? new Map<string, unknown>()
  const http = createHttpKit({
    projects: ctx.projects,
    adminKeyLabel: ctx.adminKeyLabel ?? ((token) => (ctx.isAdminKey(token) ? 'admin' : undefined)),
  })
  const metrics = Object.freeze({ count })
  const audit = ctx.audit ?? new MongoAuditLog(ctx.db)
  const loaded: LoadedPlugin[] = []
  const ids = new Set<string>()
  const hooks = tapOnly(ctx.hooks)
  for (const [index, entry] of applyRenames(entries, ctx.renamed ?? {}, ctx.logger)) {
    const id = entry.id ?? entry.plugin
    try {
      if (ids.has(id))
        throw new PluginLoadError(id, 'INGEST_ERR_PLUGIN_DUPLICATE', 'two plugins have this id; give one an `id`')
      ids.add(id)
      const source = resolvePlugin(entry.plugin, {
        builtIns: new Set(Object.keys(ctx.builtIns)),
        rootDir: ctx.rootDir,
        configDir: ctx.configDir,
      })
      const def = checkShape(await importDefinition(source, ctx, id), id)
      const options = def.optionsSchema
        ? checkSchema(def.optionsSchema, entry.options ?? {}, `plugin "${id}"`, `/plugins/${index}/options`)
        : {}
      if (!def.optionsSchema && entry.options && Object.keys(entry.options).length) {
        throw new PluginLoadError(id, 'INGEST_ERR_PLUGIN_OPTIONS', 'this plugin takes no options')
      }
      for (const need of def.requires ?? []) {
        if (!services.has(need))
          throw new PluginLoadError(
            id,
            'INGEST_ERR_PLUGIN_REQUIRES',
            `it requires the "${need}" service; enable a plugin that provides it earlier in the list`,
          )
      }
      const logger = ctx.logger.child({ plugin: id })
      const owner: TapOwner = { id, required: entry.required === true, logger, tapped: [] }
      const api: PluginApi = Object.freeze({
        id,
        required: entry.required === true,
        hooks,
        logger,
        db: ctx.db,
        projects: ctx.projects,
        isAdminKey: ctx.isAdminKey,
        http,
        metrics,
        withDeadline,
        batching,
        connectNats: (settings: NatsConnectionSettings, name: string) => connectNats(settings, name, logger),
        audit,
        dataDir: ctx.dataDir,
        configDir: ctx.configDir,
        provide<K extends ServiceName>(name: K, service: Services[K]) {
          if (services.has(name)) throw new Error(`service "${name}" is already provided`)
          services.set(name, service)
        },
        use<K extends ServiceName>(name: K): Services[K] {
          if (!services.has(name))
            throw new Error(`service "${name}" is not provided by any plugin loaded before "${id}"`)
          return services.get(name) as Services[K]
        },
      })
      const teardown = await runSetup(def, api, options, ctx, owner).catch((error: unknown) => {
        removeTaps(ctx.hooks, id)
        throw error
      })
      loaded.push({
        id,
        source: describeSource(source),
        tapped: owner.tapped,
        options,
        required: entry.required === true,
        teardown,
      })
      logger.info({ source: describeSource(source), hooks: [...new Set(owner.tapped)] }, 'plugin loaded')
    } catch (error) {
      const wrapped =
        error instanceof PluginLoadError || error instanceof ConfigError
          ? error
          : new PluginLoadError(
              id,
              (error as { code?: string }).code ?? 'INGEST_ERR_PLUGIN_LOAD',
              (error as Error).message,
              { cause: error },
            )
      if (!entry.optional) {
        await runTeardowns(loaded, ctx.logger)
        throw wrapped
      }
      ctx.logger.error({ plugin: id, err: wrapped }, 'optional plugin skipped')
    }
  }
  for (const hook of ['validate', 'sink'] as const) {
    if (ctx.hooks[hook].taps.length === 0) {
      await runTeardowns(loaded, ctx.logger)
      throw new PluginLoadError(
        '(config)',
        'INGEST_ERR_NO_TAP',
        `no plugin taps the ${hook} hook; the configuration must enable at least one`,
      )
    }
  }
  return loaded
}

/** Runs teardowns in reverse load order; one failing never stops the next. */
export async function runTeardowns(loaded: readonly LoadedPlugin[], logger: Logger): Promise<void> {
  for (const plugin of [...loaded].reverse()) {
    try {
      await plugin.teardown?.()
    } catch (error) {
      logger.error({ plugin: plugin.id, err: error }, 'teardown failed')
    }
  }
}
