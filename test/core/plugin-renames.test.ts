import { expect } from 'chai'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { ConfigError } from '../../core/config.ts'
import type { PluginEntry } from '../../core/config.ts'
import { applyRenames } from '../../core/plugin-renames.ts'
import { renamedPlugins } from '../../plugins/index.ts'
import { startTestService } from '../helpers/service.ts'

/** A logger whose lines are kept, parsed, in `lines`. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

const renamed = (entries: PluginEntry[]) => applyRenames(entries, renamedPlugins, pino({ level: 'silent' }))

describe('plugin renames: old built-in names in a config', () => {
  it('loads alias-resolve and person-update as one persons entry, at the first one’s place, with the options of both', () => {
    const entries: PluginEntry[] = [
      { plugin: 'validate' },
      { plugin: 'alias-resolve', options: { forceUpgrade: false } },
      { plugin: 'geoip' },
      { plugin: 'person-update', required: true, options: { maxKeysPerOperation: 5 } },
      { plugin: 'sink-mongo', required: true },
    ]
    expect(renamed(entries)).to.deep.equal([
      [0, { plugin: 'validate' }],
      [1, { plugin: 'persons', required: true, options: { forceUpgrade: false, maxKeysPerOperation: 5 } }],
      [2, { plugin: 'geoip' }],
      [4, { plugin: 'sink-mongo', required: true }],
    ])
  })

  it('turns property updates off when the list named alias-resolve without person-update, as it ran before', () => {
    expect(renamed([{ plugin: 'alias-resolve' }])).to.deep.equal([
      [0, { plugin: 'persons', options: { updateProperties: false } }],
    ])
    expect(renamed([{ plugin: 'person-update', id: 'people' }])).to.deep.equal([
      [0, { plugin: 'persons', id: 'people', options: {} }],
    ])
  })

  it('keeps an entry optional only when every old entry was', () => {
    const both = (a?: boolean, b?: boolean) =>
      renamed([
        { plugin: 'alias-resolve', optional: a },
        { plugin: 'person-update', optional: b },
      ])[0]![1].optional
    expect(both(true, true)).to.equal(true)
    expect(both(true, undefined)).to.equal(undefined)
    expect(both(undefined, true)).to.equal(undefined)
  })

  it('warns once per old entry, saying what to write instead', () => {
    const { logger, lines } = capturingLogger()
    applyRenames([{ plugin: 'alias-resolve' }, { plugin: 'person-update' }], renamedPlugins, logger)
    expect(lines.map((line) => [line.level, line.plugin, line.into])).to.deep.equal([
      [40, 'alias-resolve', 'persons'],
      [40, 'person-update', 'persons'],
    ])
    expect(lines[0]!.msg).to.include('write { "plugin": "persons" } instead')
  })

  it('refuses a list that names persons and an old name of it, which would enable it twice', () => {
    const entries: PluginEntry[] = [
      { plugin: 'persons' },
      { plugin: 'person-update', options: { setOnceFillsNull: false } },
    ]
    expect(() => renamed(entries))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('/plugins/1/plugin')
      .and.includes('"person-update" is now part of "persons", which the list already enables')
  })

  it('leaves lists without old names as they are', () => {
    const entries: PluginEntry[] = [{ plugin: 'validate' }, { plugin: 'persons', options: { forceUpgrade: false } }]
    expect(renamed(entries)).to.deep.equal([
      [0, entries[0]],
      [1, entries[1]],
    ])
  })
})

describe('plugin renames: a service started with the old names', function () {
  this.timeout(30_000)
  const send = async (url: string, token: string, events: Array<Record<string, unknown>>) => {
    const response = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: token, batch: events }),
    })
    expect(response.status, await response.clone().text()).to.equal(200)
  }

  it('runs the persons plugin once, with the options of both old entries, and warns', async () => {
    const { logger, lines } = capturingLogger()
    const t = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'alias-resolve' },
          { plugin: 'person-update', options: { maxKeysPerOperation: 1 } },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { logger },
    )
    try {
      await send(t.url, t.project.api_token, [
        { event: 'signed_up', distinct_id: 'old-config', properties: { $set: { plan: 'pro', seats: 3 } } },
      ])
      const response = await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=old-config`)
      expect(response.status).to.equal(200)
      const person = (await response.json()) as { properties: Record<string, unknown> }
      expect(person.properties).to.include({ plan: 'pro' }).and.not.have.property('seats')
      const loaded = lines.filter((line) => line.msg === 'plugin loaded').map((line) => line.plugin)
      expect(loaded).to.deep.equal(['validate', 'persons', 'sink-mongo'])
      expect(lines.filter((line) => line.into === 'persons').map((line) => line.plugin)).to.deep.equal([
        'alias-resolve',
        'person-update',
      ])
    } finally {
      await t.close()
    }
  })

  it('with alias-resolve alone, gives events their person and applies no $set, as before', async () => {
    const t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'alias-resolve' }, { plugin: 'sink-mongo', required: true }],
    })
    try {
      await send(t.url, t.project.api_token, [
        { event: 'signed_up', distinct_id: 'resolve-only', properties: { $set: { plan: 'pro' } } },
      ])
      const response = await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=resolve-only`)
      expect(response.status).to.equal(200)
      const person = (await response.json()) as { properties: Record<string, unknown> }
      expect(person.properties).to.not.have.property('plan')
    } finally {
      await t.close()
    }
  })
})
