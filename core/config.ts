/**
 * Configuration: `config/default.json`, then `config/<NODE_ENV>.json`, then the file named by
 * `CONFIG_FILE`, then environment variables. Objects merge key by key; arrays (the plugin list)
 * are replaced whole. The result is validated strictly: an unknown key or a wrong type stops boot
 * with its JSON path.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Type } from 'typebox'
import type { Static, TSchema } from 'typebox'
import { check } from './schema.ts'
import { QueueSettingsSchema } from './queue/settings.ts'

const strict = { additionalProperties: false } as const

export const PluginEntrySchema = Type.Object(
  {
    /** Built-in name, `./relative/path` (from the config file's folder), or npm package name. */
    plugin: Type.String({ minLength: 1 }),
    /** Instance id, when one plugin is enabled twice; defaults to the plugin's name. */
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9@][A-Za-z0-9@/._-]*$' })),
    /** A plugin that fails to load is logged and skipped instead of stopping boot (sinks only). */
    optional: Type.Optional(Type.Boolean()),
    /** A sink whose failure makes the request fail with 503 so that clients retry. */
    required: Type.Optional(Type.Boolean()),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  strict,
)

const LogLevel = Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)))

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: '0.0.0.0' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }),
        /** Wire size cap of a request body (PostHog: 20 MiB). */
        bodyLimitBytes: Type.Integer({ minimum: 1024, default: 20 * 1024 * 1024 }),
        /** Cap on a body after decompression, so a small gzip bomb cannot fill memory. */
        decodedLimitBytes: Type.Integer({ minimum: 1024, default: 100 * 1024 * 1024 }),
        /** Cap on one event's JSON: a request holding a larger event answers 413 (PostHog: Kafka's 1,000,000). */
        eventLimitBytes: Type.Integer({ minimum: 1024, default: 1_000_000 }),
        requestTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
        shutdownTimeoutMs: Type.Integer({ minimum: 0, default: 10_000 }),
        /**
         * Origins (`https://admin.example.com`) allowed to call the routes that are not meant for
         * browsers (admin /api/*, /flags/definitions, local evaluation) cross-origin, with
         * credentials. Empty: those routes answer no origin. Capture, /flags, /decide, remote config
         * and the SDK files answer every origin whatever this holds.
         */
        adminCorsOrigins: Type.Array(Type.String({ pattern: '^https?://[^/\\s]+$' }), { default: [] }),
        /** Read the client IP from X-Forwarded-For (set when behind a proxy or load balancer). */
        trustProxy: Type.Boolean({ default: true }),
        /** HTTP processes sharing the port (node:cluster). Unset: one per core when NODE_ENV=production, else 1. */
        workers: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
      },
      { ...strict, default: {} },
    ),
    storage: Type.Object(
      {
        /** Real MongoDB (a replica set in production). Unset: the embedded server under dataDir. */
        mongodbUrl: Type.Optional(Type.String({ minLength: 1 })),
        database: Type.String({ minLength: 1, default: 'hedgerow' }),
        /** Folder for the embedded database and the generated admin key, relative to the working directory. */
        dataDir: Type.String({ minLength: 1, default: './data' }),
      },
      { ...strict, default: {} },
    ),
    admin: Type.Object(
      {
        /** Bearer key of the admin API. Unset: one is generated on first start and kept in dataDir. */
        apiKey: Type.Optional(Type.String({ minLength: 16 })),
        /** What the audit log calls changes made with `apiKey` (or the generated key). */
        apiKeyLabel: Type.String({ pattern: '^[A-Za-z0-9_.@-]{1,64}$', default: 'admin' }),
        /** More admin keys, each with its label (one per operator or tool), recorded with every change they make. */
        keys: Type.Array(
          Type.Object(
            {
              label: Type.String({ pattern: '^[A-Za-z0-9_.@-]{1,64}$' }),
              key: Type.String({ minLength: 16 }),
            },
            { additionalProperties: false },
          ),
          { default: [] },
        ),
        /** How often the live event stream sends a comment line, so proxies keep an idle stream open. */
        eventStreamHeartbeatMs: Type.Integer({ minimum: 50, default: 15_000 }),
      },
      { ...strict, default: {} },
    ),
    rateLimit: Type.Object(
      {
        /** Events per second each project may send to capture (429 with Retry-After above). Unset: no limit. */
        eventsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
        /** Events a project may send at once before the rate applies; unset: ten seconds' worth. */
        burst: Type.Optional(Type.Integer({ minimum: 1 })),
      },
      { ...strict, default: {} },
    ),
    log: Type.Object(
      {
        level: { ...LogLevel, default: 'info' },
        /** `auto`: human-readable (pino-pretty) when stdout is a terminal, JSON lines otherwise. */
        format: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], { default: 'auto' }),
      },
      { ...strict, default: {} },
    ),
    pipeline: Type.Object(
      {
        /** A step or sink that takes longer fails with a retryable error (the request answers 503). */
        stepTimeoutMs: Type.Integer({ minimum: 1, default: 10_000 }),
        pluginSetupTimeoutMs: Type.Integer({ minimum: 1, default: 10_000 }),
      },
      { ...strict, default: {} },
    ),
    /** `inline`: capture runs the hook chain itself. `queue`: through NATS JetStream to workers (docs/queue-mode.md). */
    mode: Type.Union([Type.Literal('inline'), Type.Literal('queue')], { default: 'inline' }),
    queue: QueueSettingsSchema,
    plugins: Type.Array(PluginEntrySchema, { default: [] }),
  },
  strict,
)

export type Config = Static<typeof ConfigSchema>
export type PluginEntry = Static<typeof PluginEntrySchema>

/** A loaded config plus where its plugin list came from (relative plugin paths resolve there). */
export interface LoadedConfig {
  config: Config
  configDir: string
  sources: string[]
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly jsonPath: string,
    readonly reason: string,
  ) {
    super(`invalid configuration in ${source} at ${jsonPath || '/'}: ${reason}`)
    this.name = 'ConfigError'
  }
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function merge(base: Json, over: Json): Json {
  const out: Json = { ...base }
  for (const [key, value] of Object.entries(over))
    out[key] = isObject(value) && isObject(out[key]) ? merge(out[key] as Json, value) : value
  return out
}

function readJson(file: string): Json {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new ConfigError(file, '', `cannot read JSON: ${(error as Error).message}`)
  }
  if (!isObject(parsed)) throw new ConfigError(file, '', 'the file must hold a JSON object')
  return parsed
}

/** Validates a value (defaults applied); the first error becomes a ConfigError naming its path. */
export function checkSchema<S extends TSchema>(schema: S, value: unknown, source: string, basePath = ''): Static<S> {
  const result = check(schema, value, true)
  if (!result.ok) throw new ConfigError(source, `${basePath}${result.path}`, result.reason)
  return result.value
}

const ENV_OVERRIDES: ReadonlyArray<[string, (c: Json, v: string) => void]> = [
  ['PORT', (c, v) => ((c.server as Json).port = Number(v))],
  ['HOST', (c, v) => ((c.server as Json).host = v)],
  ['MONGODB_URL', (c, v) => ((c.storage as Json).mongodbUrl = v)],
  ['MONGODB_DB', (c, v) => ((c.storage as Json).database = v)],
  ['DATA_DIR', (c, v) => ((c.storage as Json).dataDir = v)],
  ['ADMIN_API_KEY', (c, v) => ((c.admin as Json).apiKey = v)],
  [
    'ADMIN_API_KEYS',
    (c, v) =>
      ((c.admin as Json).keys = v
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
        // `label:key`; without a colon the empty label fails the schema, naming the entry
        .map((entry) => {
          const colon = entry.indexOf(':')
          return colon < 0 ? { label: '', key: entry } : { label: entry.slice(0, colon), key: entry.slice(colon + 1) }
        })),
  ],
  ['LOG_LEVEL', (c, v) => ((c.log as Json).level = v)],
  ['LOG_FORMAT', (c, v) => ((c.log as Json).format = v)],
  ['WORKERS', (c, v) => ((c.server as Json).workers = Number(v))],
  [
    'ADMIN_CORS_ORIGINS',
    (c, v) =>
      ((c.server as Json).adminCorsOrigins = v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean)),
  ],
  ['MODE', (c, v) => (c.mode = v)],
  ['QUEUE_ROLE', (c, v) => ((c.queue as Json).role = v)],
  ['NATS_URL', (c, v) => ((c.queue as Json).servers = v.split(','))],
]

export function loadConfig(rootDir: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const files = [path.join(rootDir, 'config', 'default.json')]
  if (env.NODE_ENV) files.push(path.join(rootDir, 'config', `${env.NODE_ENV}.json`))
  if (env.CONFIG_FILE) files.push(path.resolve(env.CONFIG_FILE))
  let merged: Json = { server: {}, storage: {}, admin: {}, log: {}, queue: {} }
  let configDir = path.join(rootDir, 'config')
  const sources: string[] = []
  for (const file of files) {
    if (!existsSync(file)) {
      if (file === env.CONFIG_FILE || file === files[0]) throw new ConfigError(file, '', 'file not found')
      continue
    }
    const layer = readJson(file)
    if ('plugins' in layer) configDir = path.dirname(file)
    merged = merge(merged, layer)
    sources.push(file)
  }
  for (const [name, apply] of ENV_OVERRIDES)
    if (env[name] !== undefined && env[name] !== '') apply(merged, env[name] as string)
  return { config: checkSchema(ConfigSchema, merged, `${sources.join(' + ')} + environment`), configDir, sources }
}

/** A complete config from a partial one, with every default applied (tests and embedding). */
export function buildConfig(partial: Json = {}): Config {
  return checkSchema(
    ConfigSchema,
    merge({ server: {}, storage: {}, admin: {}, log: {}, pipeline: {}, queue: {} }, partial),
    'config',
  )
}
