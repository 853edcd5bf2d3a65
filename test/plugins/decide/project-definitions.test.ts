import { expect } from 'chai'
import { ProjectDefinitions } from '../../../plugins/decide/project-definitions.ts'
import type { CohortDocument, FlagDocument } from '../../../plugins/decide/store/documents.ts'

const at = new Date(0)
const flag = (id: number, key: string, cohortId: number | null, extra: Partial<FlagDocument> = {}): FlagDocument => ({
  project_id: 1,
  generation: 1,
  id,
  key,
  name: null,
  active: true,
  deleted: false,
  ensure_experience_continuity: false,
  version: 1,
  filters: {
    groups: [
      {
        properties: cohortId === null ? [] : [{ key: 'id', type: 'cohort', value: cohortId }],
        rollout_percentage: 100,
      },
    ],
  },
  created_at: at,
  updated_at: at,
  ...extra,
})
const cohort = (id: number, extra: Partial<CohortDocument> = {}): CohortDocument => ({
  project_id: 1,
  generation: 1,
  id,
  name: null,
  description: '',
  is_static: false,
  deleted: false,
  version: 0,
  created_at: at,
  updated_at: at,
  filters: {
    properties: {
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: 'x', operator: 'icontains' }] }],
    },
  },
  ...extra,
})
const nests = (inner: number) => ({
  properties: { type: 'AND', values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: inner }] }] },
})

describe('decide ProjectDefinitions', () => {
  it('knows which flags reach a static cohort, directly or through a dynamic one', () => {
    const definitions = new ProjectDefinitions(1, {
      generation: 1,
      version: 1,
      groupTypeMapping: {},
      flags: [flag(1, 'direct', 10), flag(2, 'nested', 11), flag(3, 'dynamic', 12), flag(4, 'plain', null)],
      cohorts: [cohort(10, { is_static: true, filters: {} }), cohort(11, { filters: nests(10) }), cohort(12)],
    })
    expect([...definitions.staticCohortFlagKeys].sort()).to.deep.equal(['direct', 'nested'])
  })

  it('answers hasActiveFlags, flagByKey and sameGroupTypes from the stored documents', () => {
    const definitions = new ProjectDefinitions(1, {
      generation: 1,
      version: 1,
      groupTypeMapping: { 0: 'company' },
      cohorts: [],
      flags: [
        flag(1, 'off', null, { active: false }),
        flag(2, 'gone', null, { deleted: true }),
        flag(3, 'gone', null, { deleted: false, active: false }),
      ],
    })
    expect(definitions.hasActiveFlags).to.equal(false)
    expect(definitions.flagByKey('gone')?.id).to.equal(3)
    expect(definitions.sameGroupTypes({ 0: 'company' })).to.equal(true)
    expect(definitions.sameGroupTypes({ 0: 'company', 1: 'team' })).to.equal(false)
    expect(definitions.flags.map((f) => f.team_id)).to.deep.equal([1, 1, 1])
  })
})
