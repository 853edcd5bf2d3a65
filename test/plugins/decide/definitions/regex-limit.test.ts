import { expect } from 'chai'
import { HttpError } from '../../../../core/errors.ts'
import {
  backtrackingFiltersAllowed,
  checkCohortRegexes,
  checkFlagRegexes,
} from '../../../../plugins/decide/definitions/regex-limit.ts'

const regex = (value: unknown, extra: Record<string, unknown> = {}) => ({
  key: 'name',
  type: 'person',
  operator: 'regex',
  value,
  ...extra,
})
const sets = (filters: unknown[]) => filters.map((filter) => ({ properties: [filter], rollout_percentage: 100 }))

/** The 400 a check throws, or null when it accepts. */
function refusal(check: () => void): { attr: string | null; detail: string } | null {
  try {
    check()
    return null
  } catch (error) {
    if (error instanceof HttpError && error.status === 400) return { attr: error.attr, detail: error.message }
    throw error
  }
}

describe('decide definitions: backtracking regexes per flag and cohort', () => {
  const lookAround = (i: number) => regex(`(?<=@)example${i}`)

  it('allows as many as take the match limit (10 ms) each within regexBudgetMs', () => {
    expect(backtrackingFiltersAllowed(100)).to.equal(10)
    expect(backtrackingFiltersAllowed(10)).to.equal(1)
    expect(backtrackingFiltersAllowed(255)).to.equal(25)
  })

  it('accepts a flag at the limit and refuses one past it, naming the flag, condition set and property of the first one past it', () => {
    expect(
      refusal(() =>
        checkFlagRegexes('ten', { groups: sets(Array.from({ length: 10 }, (_, i) => lookAround(i))) }, 'filters', 100),
      ),
    ).to.equal(null)
    const eleven = { groups: sets(Array.from({ length: 11 }, (_, i) => lookAround(i))) }
    const refused = refusal(() => checkFlagRegexes('eleven', eleven, 'flags.3.filters', 100))
    expect(refused?.attr).to.equal('flags.3.filters.groups.10.properties.0.value')
    expect(refused?.detail)
      .to.include('flag "eleven", condition set 11, property "name": 11 regular expressions')
      .and.include('regexBudgetMs')
    expect(refusal(() => checkFlagRegexes('eleven', eleven, 'filters', 110))).to.equal(null)
  })

  it('counts only what runs on the backtracking engine: look-around and back-references, in regex and not_regex filters', () => {
    const notCounted = [
      regex('^(a+)+$'), // catastrophic elsewhere, linear here
      regex('(?<=unclosed'), // invalid: never runs
      regex(null),
      regex('(?<=@)x', { operator: 'icontains' }),
      regex('(?<=@)x', { type: 'cohort' }),
      regex('(?<=@)x', { type: 'flag' }),
    ]
    const many = Array.from({ length: 20 }, (_, i) => notCounted[i % notCounted.length])
    expect(refusal(() => checkFlagRegexes('f', { groups: sets(many) }, 'filters', 10))).to.equal(null)
    const counted = [
      regex('(\\w)\\1', { operator: 'not_regex' }),
      regex('(?!x)y', { type: 'group', group_type_index: 0 }),
    ]
    expect(refusal(() => checkFlagRegexes('f', { groups: sets(counted) }, 'filters', 10))?.attr).to.equal(
      'filters.groups.1.properties.0.value',
    )
  })

  it('counts super condition sets and several filters of one set', () => {
    const filters = {
      groups: [{ properties: [lookAround(1), regex('plain'), lookAround(2)] }],
      super_groups: sets([lookAround(3)]),
    }
    const refused = refusal(() => checkFlagRegexes('f', filters, 'filters', 20))
    expect(refused?.attr).to.equal('filters.super_groups.0.properties.0.value')
    expect(refused?.detail).to.include('super condition set 1')
  })

  it('counts the leaves of a cohort at any depth', () => {
    const cohort = {
      type: 'OR',
      values: [
        { type: 'AND', values: [lookAround(1)] },
        { type: 'AND', values: [{ type: 'OR', values: [regex('ok'), lookAround(2)] }] },
      ],
    }
    expect(refusal(() => checkCohortRegexes('cohort 5', cohort, 'cohorts.5', 20))).to.equal(null)
    const refused = refusal(() => checkCohortRegexes('cohort 5', cohort, 'cohorts.5', 10))
    expect(refused?.attr).to.equal('cohorts.5.values.1.values.0.values.1.value')
    expect(refused?.detail).to.include('cohort 5')
  })
})
