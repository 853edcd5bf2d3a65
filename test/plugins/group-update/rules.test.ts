import { expect } from 'chai'
import {
  deepEqual,
  groupKeyOf,
  groupsOf,
  isGroupKeyTooLong,
  mergeGroupProperties,
  parseGroupIdentify,
  withGroupColumns,
  withoutGroupColumns,
  withoutPersonUpdates,
} from '../../../plugins/group-update/rules.ts'
import type { IngestEvent } from '../../../core/plugin-api.ts'

const event = (name: string, properties: Record<string, unknown>): IngestEvent => ({
  uuid: '',
  event: name,
  distinctId: 'd',
  properties,
  timestamp: new Date(0),
})

describe('group-update rules', () => {
  it('stringifies scalar group keys and replaces NUL, as PostHog does', () => {
    expect(groupKeyOf('acme')).to.equal('acme')
    expect(groupKeyOf(42)).to.equal('42')
    expect(groupKeyOf(true)).to.equal('true')
    expect(groupKeyOf('a\u0000b')).to.equal('a\uFFFDb')
    for (const value of [null, undefined, {}, ['a']]) expect(groupKeyOf(value)).to.equal(undefined)
  })

  it('finds a $groupidentify key over 400 characters, and only on $groupidentify', () => {
    expect(isGroupKeyTooLong(event('$groupidentify', { $group_key: 'k'.repeat(401) }))).to.equal(true)
    expect(isGroupKeyTooLong(event('$groupidentify', { $group_key: 'k'.repeat(400) }))).to.equal(false)
    expect(isGroupKeyTooLong(event('pageview', { $group_key: 'k'.repeat(401) }))).to.equal(false)
  })

  it('reads $group_type, $group_key and $group_set, defaulting the set to {}', () => {
    expect(parseGroupIdentify({ $group_type: 'company', $group_key: 7, $group_set: { name: 'Acme' } })).to.deep.equal({
      ok: true,
      type: 'company',
      key: '7',
      set: { name: 'Acme' },
    })
    expect(parseGroupIdentify({ $group_type: 'company', $group_key: 'acme' })).to.deep.equal({
      ok: true,
      type: 'company',
      key: 'acme',
      set: {},
    })
  })

  it('explains what is wrong with a $groupidentify it cannot apply', () => {
    expect(parseGroupIdentify({ $group_key: 'acme' })).to.include({ ok: false, warning: 'invalid_group_identify' })
    expect(parseGroupIdentify({ $group_type: '', $group_key: 'acme' })).to.include({
      ok: false,
      warning: 'invalid_group_identify',
    })
    expect(parseGroupIdentify({ $group_type: 'company' })).to.include({ ok: false, warning: 'invalid_group_identify' })
    expect(parseGroupIdentify({ $group_type: 'company', $group_key: 'acme', $group_set: 'name=Acme' })).to.include({
      ok: false,
      warning: 'invalid_group_set',
    })
    expect(parseGroupIdentify({ $group_type: 'company', $group_key: 'acme', $group_set: [1] })).to.include({
      ok: false,
      warning: 'invalid_group_set',
    })
  })

  it('removes $set, $set_once and $unset, and keeps everything else', () => {
    const stripped = withoutPersonUpdates(
      event('$groupidentify', { $set: { a: 1 }, $set_once: { b: 2 }, $unset: ['c'], $group_type: 't' }),
    )
    expect(stripped?.properties).to.deep.equal({ $group_type: 't' })
    expect(withoutPersonUpdates(event('$groupidentify', { $group_type: 't' }))).to.equal(undefined)
  })

  it('lists the groups of $groups, skipping empty types and non-scalar keys', () => {
    expect(groupsOf({ $groups: { company: 'acme', project: 12, '': 'x', team: null, org: { id: 1 } } })).to.deep.equal([
      ['company', 'acme'],
      ['project', '12'],
    ])
    for (const $groups of [undefined, null, 'company', ['acme']]) expect(groupsOf({ $groups })).to.deep.equal([])
  })

  it('adds $group_<index> columns, and removes every one from personless events', () => {
    expect(
      withGroupColumns({ a: 1 }, [
        [0, 'acme'],
        [3, 'p1'],
      ]),
    ).to.deep.equal({ a: 1, $group_0: 'acme', $group_3: 'p1' })
    expect(withoutGroupColumns({ a: 1, $group_0: 'x', $group_4: 'y' })).to.deep.equal({ a: 1 })
    expect(withoutGroupColumns({ a: 1 })).to.equal(undefined)
  })

  it('compares JSON values structurally', () => {
    expect(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).to.equal(true)
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).to.equal(false)
    expect(deepEqual([1, 2], [2, 1])).to.equal(false)
    expect(deepEqual(1, '1')).to.equal(false)
    expect(deepEqual(null, {})).to.equal(false)
    expect(deepEqual(new Date(5), new Date(5))).to.equal(true)
  })

  it('merges $group_set shallowly: changed keys overwrite, unsent keys stay, equal values change nothing', () => {
    const stored = { name: 'Acme', plan: { tier: 'pro' }, seats: 5 }
    expect(mergeGroupProperties(stored, { plan: { tier: 'pro' }, seats: 5 })).to.deep.equal({
      changed: false,
      properties: stored,
    })
    expect(mergeGroupProperties(stored, { seats: 6, region: 'eu' })).to.deep.equal({
      changed: true,
      properties: { name: 'Acme', plan: { tier: 'pro' }, seats: 6, region: 'eu' },
    })
  })

  it('keeps hostile property names as plain own properties', () => {
    const set = JSON.parse('{"__proto__": {"polluted": true}, "$browser": "x", "a.b": 1, "constructor": 2}') as Record<
      string,
      unknown
    >
    const { properties } = mergeGroupProperties({}, set)
    expect(Object.getPrototypeOf(properties)).to.equal(Object.prototype)
    expect(Object.keys(properties)).to.deep.equal(['__proto__', '$browser', 'a.b', 'constructor'])
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    expect(Object.getPrototypeOf(withGroupColumns(set, [[0, 'k']]))).to.equal(Object.prototype)
  })
})
