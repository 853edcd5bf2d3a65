/**
 * Starts the real service on an ephemeral port against the test database (the embedded server,
 * or MONGODB_URL when set), with a fresh database per call so test files never see each other.
 */
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { buildConfig } from '../../core/config.ts'
import { createService } from '../../core/index.ts'
import type { Service, ServiceOptions } from '../../core/index.ts'
import { testDbName, testMongoUrl } from './mongo.ts'

export interface TestService {
  readonly service: Service
  readonly url: string
  readonly adminKey: string
  /** A project created for the test, with its public and secret keys. */
  readonly project: { id: number; api_token: string; secret_api_token: string }
  admin(method: string, path: string, body?: unknown): Promise<Response>
  close(): Promise<void>
}

export const ROOT_DIR = path.resolve(import.meta.dirname, '../..')

export async function startTestService(
  partial: Record<string, unknown> = {},
  extra: Partial<ServiceOptions> = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-test-'))
  const config = buildConfig({
    plugins: [{ plugin: 'validate' }, { plugin: 'sink-mongo', required: true }],
    ...partial,
    server: { port: 0, host: '127.0.0.1', ...(partial.server as object) },
    storage: { mongodbUrl: await testMongoUrl(), database: testDbName('svc'), dataDir, ...(partial.storage as object) },
    admin: { apiKey: 'test-admin-key-0123456789', ...(partial.admin as object) },
    log: { level: 'silent' },
  })
  const service = await createService({
    config,
    rootDir: ROOT_DIR,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    ...extra,
  })
  const { url } = await service.listen(0, '127.0.0.1')
  const admin = (method: string, p: string, body?: unknown) =>
    fetch(url + p, {
      method,
      headers: {
        Authorization: `Bearer ${service.adminKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  const created = await admin('POST', '/api/projects', { name: 'test project' })
  if (created.status !== 201)
    throw new Error(`could not create the test project: ${created.status} ${await created.text()}`)
  const project = (await created.json()) as TestService['project']
  return {
    service,
    url,
    adminKey: service.adminKey,
    project,
    admin,
    close: async () => {
      await service.storage.db.dropDatabase().catch(() => undefined)
      await service.close()
    },
  }
}

/** Stored events of the test project, newest first, through the admin API. */
export async function storedEvents(t: TestService, query = ''): Promise<Array<Record<string, unknown>>> {
  const response = await t.admin('GET', `/api/projects/${t.project.id}/events?limit=1000${query}`)
  if (response.status !== 200) throw new Error(`events API answered ${response.status}`)
  return ((await response.json()) as { results: Array<Record<string, unknown>> }).results
}
