import { expect } from 'chai'
import { mergeRequestOf } from '../../../plugins/persons/merge.ts'
import type { IngestEvent } from '../../../core/plugin-api.ts'

const event = (name: string, properties: Record<string, unknown>): IngestEvent => ({
  uuid: '',
  event: name,
  distinctId: 'user-1',
  properties,
  timestamp: new Date(0),
})

describe('persons: merge requests', () => {
  it('merges $anon_distinct_id into the distinct_id on $identify', () => {
    expect(mergeRequestOf(event('$identify', { $anon_distinct_id: 'anon-1' }))).to.deep.equal({
      other: 'anon-1',
      into: 'user-1',
    })
  })

  it('counts a present but null $anon_distinct_id, which becomes the illegal "null"', () => {
    expect(mergeRequestOf(event('$identify', { $anon_distinct_id: null }))).to.deep.equal({
      other: 'null',
      into: 'user-1',
    })
    expect(mergeRequestOf(event('$identify', {}))).to.equal(undefined)
  })

  it('merges a truthy alias into the distinct_id on $create_alias and $merge_dangerously', () => {
    expect(mergeRequestOf(event('$create_alias', { alias: 'alias-1' }))).to.deep.equal({
      other: 'alias-1',
      into: 'user-1',
    })
    expect(mergeRequestOf(event('$merge_dangerously', { alias: 42 }))).to.deep.equal({ other: '42', into: 'user-1' })
    for (const alias of ['', 0, null, false, undefined])
      expect(mergeRequestOf(event('$create_alias', { alias })), String(alias)).to.equal(undefined)
  })

  it('ignores merge properties on other events, and an inherited alias', () => {
    expect(mergeRequestOf(event('$pageview', { alias: 'a', $anon_distinct_id: 'b' }))).to.equal(undefined)
    expect(
      mergeRequestOf(event('$create_alias', Object.create({ alias: 'inherited' }) as Record<string, unknown>)),
    ).to.equal(undefined)
  })
})
