/**
 * The recorded SDK traffic (test/fixtures/sdk-wire) as test input: the flag definitions the
 * recording server handed posthog-node, and every recorded /flags request with its wire body
 * rebuilt from the decoded JSON and decoding steps (as test/core/capture/sdk-wire.test.ts does).
 */
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { startTestService } from '../../../helpers/service.ts'
import type { TestService } from '../../../helpers/service.ts'

export const FIXTURES = new URL('../../../fixtures/sdk-wire/', import.meta.url)
const RECORDED_TOKEN = 'phc_testprojectkey123'

export interface RecordedRequest {
  seq: number
  method: string
  path: string
  url: string
  query: Record<string, string>
  headers: Record<string, string>
  status: number
  response: string
  body: { bytes: number; steps: string[]; json?: Record<string, unknown> }
}

export function recorded(file: string): RecordedRequest[] {
  return readFileSync(new URL(file, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Partial<RecordedRequest>)
    .filter((line): line is RecordedRequest => typeof line.method === 'string')
}

/** The definitions the recording server answered posthog-node's /flags/definitions with. */
export function recordedDefinitions(): Record<string, unknown> {
  const response = recorded('node-requests.jsonl').find((r) => r.path === '/flags/definitions' && r.status === 200)
  if (!response) throw new Error('no recorded /flags/definitions response')
  return JSON.parse(response.response) as Record<string, unknown>
}

/** The recorded body with our project's key in place of the recorded one, encoded as it was sent. */
export function rebuildBody(request: RecordedRequest, token: string): Buffer {
  const json = JSON.stringify(request.body.json).replaceAll(RECORDED_TOKEN, token)
  const steps = request.body.steps.join('+')
  if (steps === '') return Buffer.from(json)
  if (steps === 'gunzip') return gzipSync(json)
  if (steps === 'form:data=+base64')
    return Buffer.from(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`)
  throw new Error(`seq ${request.seq}: no rebuild for decoding steps ${steps}`)
}

/** The plugins a flags deployment runs: persons and groups written by ingestion, read by decide. */
export const DECIDE_PLUGINS = [
  { plugin: 'validate' },
  { plugin: 'persons' },
  { plugin: 'group-update' },
  { plugin: 'decide', options: { pollIntervalMs: 200 } },
  { plugin: 'sink-mongo', required: true },
]

export async function startDecideService(plugins: unknown[] = DECIDE_PLUGINS): Promise<TestService> {
  return startTestService({ plugins })
}

export async function putDefinitions(t: TestService, body: unknown): Promise<Response> {
  return t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, body)
}

export async function postFlags(
  t: TestService,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(t.url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}
