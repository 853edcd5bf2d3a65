import { expect } from 'chai'
import { HttpError } from '../../../../core/errors.ts'
import { readDefinitions, remapGroupTypeIndexes } from '../../../../plugins/decide/definitions/import.ts'

function attrOf(body: unknown): string | null {
  try {
    readDefinitions(body)
  } catch (error) {
    if (error instanceof HttpError && error.status === 400) return error.attr
    throw error
  }
  throw new Error('expected a 400')
}

const flag = (id: number, key: string, extra: Record<string, unknown> = {}) => ({
  id,
  key,
  active: true,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  ...extra,
})

describe('decide definitions import', () => {
  it('keeps flag ids and PostHog fields, fills the defaults and drops unknown fields', () => {
    const read = readDefinitions({
      flags: [flag(42, 'a', { name: 'A', version: 3, evaluation_runtime: 'server', team_id: 99, unknown_field: 1 })],
    })
    expect(read.flags).to.deep.equal([
      {
        id: 42,
        key: 'a',
        name: 'A',
        active: true,
        deleted: false,
        ensure_experience_continuity: false,
        version: 3,
        evaluation_runtime: 'server',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      },
    ])
  })

  it('turns SDK-format dependencies (key + dependency_chain) back into ids, and leaves server-format ones', () => {
    const dep = (key: string, chain?: string[]) => ({
      properties: [
        { key, type: 'flag', value: true, operator: 'flag_evaluates_to', ...(chain && { dependency_chain: chain }) },
      ],
    })
    const read = readDefinitions({
      flags: [
        flag(7, 'base'),
        flag(8, 'by-key', { filters: { groups: [dep('base', ['base'])] } }),
        flag(9, 'by-id', { filters: { groups: [dep('7')] } }),
        flag(10, 'missing', { filters: { groups: [dep('nope', [])] } }),
      ],
    })
    const keys = read.flags.map((f) => f.filters.groups?.[0].properties?.[0]).slice(1)
    expect(keys).to.deep.equal([
      { key: '7', type: 'flag', value: true, operator: 'flag_evaluates_to' },
      { key: '7', type: 'flag', value: true, operator: 'flag_evaluates_to' },
      { key: 'nope', type: 'flag', value: true, operator: 'flag_evaluates_to' },
    ])
  })

  it('reads bare property groups as dynamic cohorts and cohort objects as static or dynamic cohorts', () => {
    const group = {
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: 'x', operator: 'icontains' }] }],
    }
    const read = readDefinitions({
      flags: [],
      cohorts: { 5: group, 6: { name: 'Beta', is_static: true }, 7: { name: 'Named', filters: { properties: group } } },
    })
    expect(read.cohorts.map((c) => [c.id, c.name, c.is_static, c.filters])).to.deep.equal([
      [5, null, false, { properties: group }],
      [6, 'Beta', true, {}],
      [7, 'Named', false, { properties: group }],
    ])
  })

  it('accepts a bucketing identifier that is null or empty, at the top level or inside filters', () => {
    const read = readDefinitions({
      flags: [
        flag(1, 'a', { bucketing_identifier: null }),
        flag(2, 'b', { bucketing_identifier: '' }),
        flag(3, 'c', { filters: { groups: [], bucketing_identifier: 'device_id' } }),
      ],
    })
    expect(read.flags.map((f) => [f.bucketing_identifier, f.filters.bucketing_identifier])).to.deep.equal([
      [null, undefined],
      ['', undefined],
      [undefined, 'device_id'],
    ])
    expect(attrOf({ flags: [flag(1, 'a', { filters: { groups: [], bucketing_identifier: 'ip' } })] })).to.equal(
      'flags.0.filters.bucketing_identifier',
    )
  })

  it('reads cohorts nested deeper than two levels, and refuses only past 64', () => {
    const leaf = { key: 'email', type: 'person', value: 'x', operator: 'icontains' }
    let deep: unknown = leaf
    for (let i = 0; i < 10; i++) deep = { type: 'AND', values: [deep] }
    expect(
      readDefinitions({ flags: [], cohorts: { 5: { type: 'OR', values: [leaf] }, 6: { type: 'AND', values: [deep] } } })
        .cohorts,
    ).to.have.length(2)
    for (let i = 0; i < 60; i++) deep = { type: 'AND', values: [deep] }
    expect(attrOf({ flags: [], cohorts: { 7: { type: 'AND', values: [deep] } } })).to.match(
      /^cohorts\.7(\.values\.0)+$/,
    )
  })

  it('answers 400 naming the offending path', () => {
    expect(attrOf({})).to.equal('flags')
    expect(attrOf({ flags: [flag(1, 'a', { active: 'yes' })] })).to.equal('flags.0.active')
    expect(attrOf({ flags: [flag(1, 'a'), { id: 2, key: 'b', active: true }] })).to.equal('flags.1.filters')
    expect(attrOf({ flags: [flag(1, 'a', { filters: { groups: [{ rollout_percentage: 101 }] } })] })).to.equal(
      'flags.0.filters.groups.0.rollout_percentage',
    )
    expect(attrOf({ flags: [flag(1, 'a', { filters: { groups: [{ properties: [{ value: 1 }] }] } })] })).to.equal(
      'flags.0.filters.groups.0.properties.0.key',
    )
    expect(attrOf({ flags: [flag(1, 'a', { filters: { aggregation_group_type_index: 5 } })] })).to.equal(
      'flags.0.filters.aggregation_group_type_index',
    )
    expect(attrOf({ flags: [flag(1, 'a', { filters: { multivariate: { variants: [{ key: 'x' }] } } })] })).to.equal(
      'flags.0.filters.multivariate.variants.0.rollout_percentage',
    )
    expect(attrOf({ flags: [flag(1, 'a'), flag(1, 'b')] })).to.equal('flags.1.id')
    expect(attrOf({ flags: [flag(1, 'a'), flag(2, 'a')] })).to.equal('flags.1.key')
    expect(attrOf({ flags: [flag(1, '__proto__')] })).to.equal('flags.0.key')
    expect(attrOf({ flags: [], group_type_mapping: { 5: 'x' } })).to.equal('group_type_mapping.5')
    expect(attrOf({ flags: [], group_type_mapping: { 0: 'company', 1: 'company' } })).to.equal('group_type_mapping.1')
    expect(attrOf({ flags: [], cohorts: { 3: { type: 'XOR', values: [] } } })).to.equal('cohorts.3.type')
    expect(
      attrOf({ flags: [], cohorts: { 3: { type: 'OR', values: [{ type: 'AND', values: [{ value: 1 }] }] } } }),
    ).to.equal('cohorts.3.values.0.values.0')
    expect(attrOf({ flags: [], cohorts: { 3: { name: 'no filters' } } })).to.equal('cohorts.3.filters.properties')
    expect(attrOf({ flags: [], cohorts: { abc: { type: 'OR', values: [] } } })).to.equal('cohorts.abc')
  })

  it('allows a deleted flag to share a key with a live one', () => {
    expect(readDefinitions({ flags: [flag(1, 'a', { deleted: true }), flag(2, 'a')] }).flags).to.have.length(2)
  })

  it('remaps every group type index of a flag, leaving unknown indexes and person conditions alone', () => {
    const filters = {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [{ key: 'seats', type: 'group', group_type_index: 0, value: 1 }],
          aggregation_group_type_index: 2,
        },
        { properties: [{ key: 'plan', type: 'person', value: 'pro' }], aggregation_group_type_index: null },
      ],
      super_groups: [{ properties: [{ key: 'x', type: 'group', group_type_index: 3 }] }],
    }
    const remapped = remapGroupTypeIndexes(
      filters,
      new Map([
        [0, 1],
        [2, 0],
      ]),
    )
    expect(remapped.aggregation_group_type_index).to.equal(1)
    expect(remapped.groups?.[0]).to.deep.include({ aggregation_group_type_index: 0 })
    expect(remapped.groups?.[0].properties?.[0].group_type_index).to.equal(1)
    expect(remapped.groups?.[1].aggregation_group_type_index).to.equal(null)
    expect(remapped.super_groups?.[0].properties?.[0].group_type_index).to.equal(3)
    expect(filters.aggregation_group_type_index, 'the input is not changed').to.equal(0)
  })
})

describe('decide definitions import: backtracking regexes', () => {
  const lookAroundSets = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      properties: [{ key: 'email', type: 'person', operator: 'regex', value: `(?<=@)corp${i}` }],
      rollout_percentage: 100,
    }))

  it('refuses a flag with more than fit in the budget, and accepts it with a larger budget or once deleted', () => {
    const body = { flags: [flag(1, 'fine'), flag(2, 'costly', { filters: { groups: lookAroundSets(11) } })] }
    expect(attrOf(body)).to.equal('flags.1.filters.groups.10.properties.0.value')
    expect(readDefinitions(body, 110).flags).to.have.length(2)
    expect(
      readDefinitions({ flags: [flag(2, 'costly', { deleted: true, filters: { groups: lookAroundSets(11) } })] }).flags,
    ).to.have.length(1)
  })

  it('refuses a dynamic cohort with more than fit, in either cohort form', () => {
    const group = { type: 'OR', values: lookAroundSets(11).map((set) => ({ type: 'AND', values: set.properties })) }
    expect(attrOf({ flags: [], cohorts: { 5: group } })).to.equal('cohorts.5.values.10.values.0.value')
    expect(attrOf({ flags: [], cohorts: { 6: { name: 'N', filters: { properties: group } } } })).to.equal(
      'cohorts.6.filters.properties.values.10.values.0.value',
    )
  })
})
