/**
 * decide reads persons only through the contract's `persons` service: any plugin may provide it
 * (here one written against core/plugin-api.ts alone, keeping persons in memory), and without one
 * decide still starts, says so, and evaluates with the request's properties only.
 */
import { expect } from 'chai'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { API_VERSION, definePlugin } from '../../../core/plugin-api.ts'
import type { PersonsService, PluginDefinition, StoredPerson } from '../../../core/plugin-api.ts'
import { builtInPlugins } from '../../../plugins/index.ts'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

type Json = Record<string, any>

const DEFINITIONS = {
  flags: [
    {
      id: 1,
      key: 'pro-plan',
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }], rollout_percentage: 100 },
        ],
      },
    },
  ],
}

/** A third party's persons: two fixed persons, read through the contract's interface. */
const PEOPLE: Record<string, StoredPerson> = {
  ana: { id: 'person-ana', properties: { plan: 'pro' }, createdAt: new Date('2026-01-01T00:00:00Z') },
  ben: { id: 'person-ben', properties: { plan: 'free' }, createdAt: new Date('2026-01-01T00:00:00Z') },
}
const memoryPersons: PersonsService = {
  byDistinctId: async (_projectId, distinctId) => PEOPLE[distinctId] ?? null,
  personIdsOf: async (_projectId, distinctIds) => [...new Set(distinctIds.flatMap((id) => PEOPLE[id]?.id ?? []))],
  distinctIdsOf: async (_projectId, personId) => Object.keys(PEOPLE).filter((id) => PEOPLE[id]!.id === personId),
}
const memoryPersonsPlugin = definePlugin({
  name: 'memory-persons',
  apiVersion: API_VERSION,
  setup(api) {
    api.provide('persons', memoryPersons)
  },
})

async function start(plugins: unknown[], logger = pino({ level: 'silent' })): Promise<TestService> {
  const builtIns = { ...builtInPlugins, 'memory-persons': memoryPersonsPlugin as PluginDefinition }
  const t = await startTestService({ plugins }, { builtIns, logger })
  const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)
  expect(put.status, await put.clone().text()).to.equal(200)
  return t
}

async function proPlan(t: TestService, body: Json): Promise<boolean> {
  const response = await fetch(`${t.url}/flags/?v=2`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: t.project.api_token, ...body }),
  })
  expect(response.status).to.equal(200)
  const flags = ((await response.json()) as Json).flags as Record<string, Json>
  return flags['pro-plan']!.enabled as boolean
}

describe('decide: persons through the contract', function () {
  this.timeout(30_000)

  it('evaluates against the persons of whichever plugin provides the persons service', async () => {
    const t = await start([
      { plugin: 'validate' },
      { plugin: 'memory-persons' },
      { plugin: 'decide' },
      { plugin: 'sink-mongo', required: true },
    ])
    try {
      expect(await proPlan(t, { distinct_id: 'ana' })).to.equal(true)
      expect(await proPlan(t, { distinct_id: 'ben' })).to.equal(false)
      expect(await proPlan(t, { distinct_id: 'nobody' })).to.equal(false)
    } finally {
      await t.close()
    }
  })

  it('starts without a persons service, warns, and matches on request properties only', async () => {
    const lines: Array<Record<string, unknown>> = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    })
    const t = await start(
      [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }],
      pino(stream),
    )
    try {
      expect(await proPlan(t, { distinct_id: 'ana' })).to.equal(false)
      expect(await proPlan(t, { distinct_id: 'ana', person_properties: { plan: 'pro' } })).to.equal(true)
      const warning = lines.find((line) => line.plugin === 'decide' && line.level === 40)
      expect(warning?.msg).to.include('no persons service').and.include('enable the "persons" plugin before decide')
    } finally {
      await t.close()
    }
  })
})
