/**
 * Runs the sink under test inside the real service: real config checks, loader, engine (failure policies and timeouts),
 * pipeline and HTTP on an ephemeral port. Next to it sits a probe sink that records what the
 * pipeline handed every sink and which sinks failed, so the suite can compare against it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { buildConfig } from '../../core/config.ts'
import { createService } from '../../core/index.ts'
import type { Service } from '../../core/index.ts'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { PluginDefinition, Project } from '../../core/plugin-api.ts'
import { startEmbeddedMongo } from '../../core/storage/embedded/index.ts'
import type { EmbeddedMongo } from '../../core/storage/embedded/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { storedFromIngest } from './events.ts'
import type { StoredEvent, WireEvent } from './events.ts'

export const PROBE = 'conformance-probe'
const ADMIN_KEY = 'conformance-admin-key-0123456789'

/** What the probe saw: every event handed to the sinks, and the ids of sinks that failed. */
export interface ProbeRecord {
  readonly events: StoredEvent[]
  readonly failedSinks: string[]
}

function probePlugin(record: ProbeRecord): PluginDefinition {
  return definePlugin({
    name: PROBE,
    apiVersion: API_VERSION,
    setup(api) {
      api.hooks.sink.tapPromise({ name: api.id }, async function recordBatch(batch) {
        for (const event of batch.events) record.events.push(storedFromIngest(event, batch))
      })
      api.hooks.stepFailed.tap({ name: api.id }, (info) => {
        if (info.hook === 'sink') record.failedSinks.push(info.plugin)
      })
    },
  }) as PluginDefinition
}

/**
 * One embedded database server for every suite defined in the process (a server start costs more
 * than a suite's checks): each suite registers when it is defined and the last one to finish
 * closes the server. MONGODB_URL, when set, is used instead.
 */
const sharedMongo: { users: number; dir?: string; server?: Promise<EmbeddedMongo> } = { users: 0 }

async function releaseMongo(): Promise<void> {
  sharedMongo.users -= 1
  if (sharedMongo.users > 0 || !sharedMongo.server) return
  const server = sharedMongo.server
  sharedMongo.server = undefined
  await (await server).close()
  rmSync(sharedMongo.dir!, { recursive: true, force: true })
}

/** The database and a scratch folder of one suite. */
export class SuiteResources {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-conformance-'))
  private databases = 0

  constructor() {
    sharedMongo.users += 1
  }

  async url(): Promise<string> {
    if (process.env.MONGODB_URL) return process.env.MONGODB_URL
    if (!sharedMongo.server) {
      sharedMongo.dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-conformance-mongo-'))
      // The folder is thrown away after the run: no fsync needed for it.
      sharedMongo.server = startEmbeddedMongo({ dataDir: sharedMongo.dir, syncIntervalMs: 60_000 })
    }
    return (await sharedMongo.server).url
  }

  database(): string {
    this.databases += 1
    return `conformance_${process.pid.toString(36)}_${this.databases}_${Math.random().toString(36).slice(2, 8)}`
  }

  async close(): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true })
    await releaseMongo()
  }
}

export interface Harness {
  readonly service: Service
  readonly url: string
  readonly project: Project
  readonly probe: ProbeRecord
  /** POSTs one `/batch/` request; resolves with the HTTP status. */
  post(events: readonly WireEvent[]): Promise<number>
  /** Closes the service: drains requests, then runs teardowns (the sink's flush). */
  close(): Promise<void>
}

export interface HarnessOptions {
  readonly plugin: PluginDefinition
  readonly options: object
  readonly required: boolean
  readonly timeoutMs: number
}

export async function startHarness(resources: SuiteResources, opts: HarnessOptions): Promise<Harness> {
  const probe: ProbeRecord = { events: [], failedSinks: [] }
  const config = buildConfig({
    // The shutdown budget covers the requests' drain and every teardown: twice a step's time lets a
    // sink's flush take as long as a step may (sink-webhook drains a dead receiver for 5 s).
    server: { host: '127.0.0.1', port: 0, shutdownTimeoutMs: opts.timeoutMs * 2 },
    storage: {
      mongodbUrl: await resources.url(),
      database: resources.database(),
      dataDir: path.join(resources.dir, 'data'),
    },
    admin: { apiKey: ADMIN_KEY },
    log: { level: 'silent' },
    pipeline: { stepTimeoutMs: opts.timeoutMs, pluginSetupTimeoutMs: opts.timeoutMs },
    plugins: [
      { plugin: 'validate' },
      { plugin: opts.plugin.name, required: opts.required, options: opts.options as Record<string, unknown> },
      { plugin: PROBE, required: true },
    ],
  })
  const service = await createService({
    config,
    rootDir: resources.dir,
    configDir: resources.dir,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    builtIns: { ...builtInPlugins, [opts.plugin.name]: opts.plugin, [PROBE]: probePlugin(probe) },
  })
  let closed = false
  try {
    const { url } = await service.listen(0, '127.0.0.1')
    const project = await service.projects.create({ name: 'conformance' })
    return {
      service,
      url,
      project,
      probe,
      async post(events) {
        const response = await fetch(`${url}/batch/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ api_key: project.apiToken, batch: events }),
        })
        await response.arrayBuffer()
        return response.status
      },
      async close() {
        if (closed) return
        closed = true
        await service.storage.db.dropDatabase().catch(() => undefined)
        await service.close()
      },
    }
  } catch (error) {
    await service.close()
    throw error
  }
}
