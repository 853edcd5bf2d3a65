/**
 * The service as deployed: the plugin list of config/default.json (every ingestion step, decide,
 * static-sdk and the sink), with flag definitions covering what posthog-js shows a visitor, and
 * the admin reads the tests assert on.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { ROOT_DIR, startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

interface PluginEntry {
  plugin: string
  options?: Record<string, unknown>
}

export function defaultPlugins(): PluginEntry[] {
  const config = JSON.parse(readFileSync(path.join(ROOT_DIR, 'config/default.json'), 'utf8')) as {
    plugins: PluginEntry[]
  }
  // Definitions change within a test; the in-process cache needs no long poll for that.
  return config.plugins.map((entry) =>
    entry.plugin === 'decide' ? { ...entry, options: { ...entry.options, pollIntervalMs: 200 } } : entry,
  )
}

/** Boolean with a payload, 50/50 multivariate, person property, group property, and an inactive flag. */
export const FLAG_DEFINITIONS = {
  flags: [
    {
      id: 1,
      key: 'beta-feature',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"color":"blue"}' } },
    },
    {
      id: 2,
      key: 'multivariate-flag',
      active: true,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
        payloads: { control: '{"variant":"control"}', test: '{"variant":"test"}' },
      },
    },
    {
      id: 3,
      key: 'person-prop-flag',
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 },
        ],
        payloads: { true: '"pro-payload"' },
      },
    },
    {
      id: 4,
      key: 'group-flag',
      active: true,
      filters: {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [{ key: 'industry', value: ['tech'], operator: 'exact', type: 'group', group_type_index: 0 }],
            rollout_percentage: 100,
          },
        ],
      },
    },
    { id: 5, key: 'off-flag', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
  ],
  group_type_mapping: { '0': 'company' },
  cohorts: {},
}

export async function startBrowserTestService(): Promise<TestService> {
  const t = await startTestService({ plugins: defaultPlugins() })
  const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, FLAG_DEFINITIONS)
  if (put.status !== 200) throw new Error(`flag definitions: ${put.status} ${await put.text()}`)
  return t
}

export interface StoredPerson {
  id: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  is_identified: boolean
}

/** The person with this distinct id, or undefined (404). */
export async function personOf(t: TestService, distinctId: string): Promise<StoredPerson | undefined> {
  const response = await t.admin(
    'GET',
    `/api/projects/${t.project.id}/persons?distinct_id=${encodeURIComponent(distinctId)}`,
  )
  if (response.status === 404) return undefined
  if (response.status !== 200) throw new Error(`persons API answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as StoredPerson
}

export async function groupOf(
  t: TestService,
  type: string,
  key: string,
): Promise<{ group_properties: Record<string, unknown> } | undefined> {
  const response = await t.admin(
    'GET',
    `/api/projects/${t.project.id}/groups?group_type=${encodeURIComponent(type)}&group_key=${encodeURIComponent(key)}`,
  )
  if (response.status === 404) return undefined
  if (response.status !== 200) throw new Error(`groups API answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as { group_properties: Record<string, unknown> }
}

export interface ServiceFlags {
  flags: Record<string, { enabled: boolean; variant?: string | null; metadata?: { payload?: unknown } }>
}

/** What the service itself answers /flags with for this visitor (the values the browser must show). */
export async function serviceFlags(t: TestService, body: Record<string, unknown>): Promise<ServiceFlags> {
  const response = await fetch(`${t.url}/flags/?v=2`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: t.project.api_token, ...body }),
  })
  if (response.status !== 200) throw new Error(`/flags answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as ServiceFlags
}

/** Polls `probe` until it returns a value other than undefined; fails after `timeoutMs` naming `what`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
}
