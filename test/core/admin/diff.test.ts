import { expect } from 'chai'
import { asJson, diffStates, jsonEqual } from '../../../core/admin/diff.ts'

describe('admin audit: the difference between two states', () => {
  it('names each changed leaf by its dotted path, through objects and arrays', () => {
    const before = { name: 'a', filters: { groups: [{ rollout_percentage: 30, properties: [] }] }, active: true }
    const after = { name: 'b', filters: { groups: [{ rollout_percentage: 50, properties: [] }] }, active: true }
    expect(diffStates(before, after)).to.deep.equal([
      { path: 'name', before: 'a', after: 'b' },
      { path: 'filters.groups.0.rollout_percentage', before: 30, after: 50 },
    ])
  })

  it('tells a field added or removed from one set to null, and lists a new array entry whole', () => {
    expect(diffStates({ a: 1, b: null }, { b: 2, c: null })).to.deep.equal([
      { path: 'a', before: 1 },
      { path: 'b', before: null, after: 2 },
      { path: 'c', after: null },
    ])
    expect(diffStates({ groups: [{ x: 1 }] }, { groups: [{ x: 1 }, { x: 2 }] })).to.deep.equal([
      { path: 'groups.1', after: { x: 2 } },
    ])
  })

  it('leaves out the top-level fields it is told to ignore, and finds nothing between equal states', () => {
    expect(
      diffStates({ version: 1, updated_at: 'x', key: 'k' }, { version: 2, updated_at: 'y', key: 'k' }, [
        'version',
        'updated_at',
      ]),
    ).to.deep.equal([])
    expect(diffStates({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).to.deep.equal([])
  })

  it('compares as JSON: key order does not matter, dates are their ISO text', () => {
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).to.equal(true)
    expect(jsonEqual([1, 2], [2, 1])).to.equal(false)
    expect(asJson({ at: new Date('2026-01-02T03:04:05Z'), gone: undefined })).to.deep.equal({
      at: '2026-01-02T03:04:05.000Z',
    })
  })
})
