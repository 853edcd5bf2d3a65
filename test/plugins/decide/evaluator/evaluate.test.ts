import { expect } from 'chai'
import { evaluateFlags, evaluateFlagsInSlices } from '../../../../plugins/decide/evaluator/evaluate.ts'
import type { EvaluationInput, PropertyFilter } from '../../../../plugins/decide/evaluator/types.ts'
import { evaluate, flag, NOW } from './helpers.ts'

const regexFilter = (value: string, key = 'name'): PropertyFilter => ({ key, value, operator: 'regex', type: 'person' })
/** One condition set per pattern: every set is tried when none matches. */
const regexFlag = (key: string, patterns: string[], propertyKey = 'name') =>
  flag(key, {
    groups: patterns.map((pattern) => ({ properties: [regexFilter(pattern, propertyKey)], rollout_percentage: 100 })),
  })

/** A clock that moves `step` ms each time it is read: matching costs are then exact. */
function steppingClock(step: number) {
  let now = 0
  return () => (now += step)
}

describe('evaluateFlags: the request budget for regular expressions', () => {
  it('fails (timeout) the flags whose patterns find the budget spent, and answers every other flag', () => {
    // a match is charged the 40 ms between its two clock reads: the third leaves -20
    const flags = [
      regexFlag('first', ['^sam']),
      regexFlag('second', ['^sam']),
      regexFlag('third', ['^sam']),
      regexFlag('fourth', ['^sam']),
      flag('rollout', { groups: [{ rollout_percentage: 100 }] }),
      flag('exact', {
        groups: [{ properties: [{ key: 'name', value: 'sam', type: 'person' }], rollout_percentage: 100 }],
      }),
    ]
    const result = evaluate(flags, {
      personPropertyOverrides: { name: 'sam' },
      budget: { clock: steppingClock(40), regexMs: 100 },
    })
    for (const key of ['first', 'second', 'third'])
      expect(result.flags[key], key).to.deep.include({ enabled: true, failed: false })
    expect(result.flags.fourth).to.deep.include({ enabled: false, variant: null, failed: true })
    expect(result.flags.fourth.reason.code).to.equal('timeout')
    expect(result.flags.fourth.reason.description).to.match(/time budget for regular expressions/)
    expect(result.flags.rollout.enabled).to.equal(true)
    expect(result.flags.exact.enabled).to.equal(true)
    expect(result.errorsWhileComputingFlags).to.equal(true)
  })

  it('charges cohort filters too, and a failure inside a cohort fails only the flag that was being evaluated', () => {
    const cohorts = {
      5: { id: 5, filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [regexFilter('^sam')] }] } } },
    }
    const cohortFlag = (key: string) =>
      flag(key, { groups: [{ properties: [{ key: 'id', value: 5, type: 'cohort' }], rollout_percentage: 100 }] })
    const flags = [
      regexFlag('spends', ['^sam', '^sam']),
      cohortFlag('in-cohort'),
      flag('rollout', { groups: [{ rollout_percentage: 100 }] }),
    ]
    const database = { status: 'loaded' as const, person: { properties: { name: 'sam' } } }
    const result = evaluate(flags, { cohorts, database, budget: { clock: steppingClock(100), regexMs: 100 } })
    expect(result.flags.spends.enabled).to.equal(true)
    expect(result.flags['in-cohort'].reason.code).to.equal('timeout')
    expect(result.flags.rollout.enabled).to.equal(true)
    const unbounded = evaluate(flags, { cohorts, database })
    expect(unbounded.flags['in-cohort'].enabled).to.equal(true)
    expect(unbounded.errorsWhileComputingFlags).to.equal(false)
  })

  it('bounds a request whose look-around patterns all meet crafted values: 200 of them cost 2 s without it', () => {
    const catastrophic = Array.from({ length: 10 }, (_, i) => `(?<=x)(a+)+\\1${'b'.repeat(i + 1)}`)
    // flags run in id order: the ordinary regex flag before the heavy ones (after them, it would find the budget spent)
    const ordinary = regexFlag('ordinary-regex', ['^x'])
    const heavy = Array.from({ length: 20 }, (_, i) => regexFlag(`heavy-${i}`, catastrophic))
    const flags = [ordinary, ...heavy, flag('rollout', { groups: [{ rollout_percentage: 100 }] })]
    const started = performance.now()
    // one evaluation, not helpers' compiled-against-interpreted pair: on a wall clock the two runs
    // spend the budget at different flags, so their answers differ by timing alone
    const result = evaluateFlags({
      flags,
      distinctId: 'user-1',
      database: { status: 'skipped' },
      now: NOW,
      personPropertyOverrides: { name: `x${'a'.repeat(30)}c` },
      budget: { clock: () => performance.now(), regexMs: 100 },
    })
    const elapsed = performance.now() - started
    expect(elapsed, `${elapsed.toFixed(0)} ms`).to.be.below(800)
    expect(result.errorsWhileComputingFlags).to.equal(true)
    expect(result.flags['ordinary-regex'].enabled).to.equal(true)
    expect(result.flags.rollout.enabled).to.equal(true)
    const failed = heavy.filter((f) => result.flags[f.key].failed)
    expect(failed.length).to.be.at.least(19)
    for (const f of failed) expect(result.flags[f.key].reason.code).to.equal('timeout')
  })

  it('changes nothing for ordinary requests: the same answers with and without a budget', () => {
    const flags = [
      regexFlag('linear', ['^s', 'm$']),
      regexFlag('look-around', ['(?<=s)am', '(\\w)\\1']),
      regexFlag('no-match', ['^z', '(?<=z)a']),
    ]
    const input = { personPropertyOverrides: { name: 'sam' } }
    const bounded = evaluate(flags, { ...input, budget: { clock: () => performance.now(), regexMs: 100 } })
    expect(bounded).to.deep.equal(evaluate(flags, input))
    expect(bounded.errorsWhileComputingFlags).to.equal(false)
  })
})

describe('evaluateFlagsInSlices', () => {
  const flags = Array.from({ length: 12 }, (_, i) => regexFlag(`flag-${i}`, ['^s', `${i}$`]))
  const input: EvaluationInput = {
    flags,
    distinctId: 'user-1',
    database: { status: 'skipped' },
    now: NOW,
    personPropertyOverrides: { name: 'sam3' },
  }

  it('pauses between flags once a slice has passed, and answers as evaluateFlags does', async () => {
    let pauses = 0
    let reads = 0
    const clock = steppingClock(6)
    const result = await evaluateFlagsInSlices(input, {
      sliceMs: 10,
      clock: () => (reads++, clock()),
      pause: async () => void pauses++,
    })
    expect(result).to.deep.equal(evaluateFlags(input))
    // 6 ms per clock read, read at the start, before every fourth flag and after each pause: the
    // slice has passed at the read before flag 8 (the one before flag 4 is 6 ms after the start)
    expect(pauses).to.equal(1)
    expect(reads).to.equal(4)
  })

  it('never pauses an ordinary request', async () => {
    let pauses = 0
    await evaluateFlagsInSlices(input, {
      // the real clock: a generous slice, since a loaded machine may deschedule the process mid-request
      sliceMs: 250,
      clock: () => performance.now(),
      pause: async () => void pauses++,
    })
    expect(pauses).to.equal(0)
  })
})

describe('evaluateFlags: the answers in order', () => {
  const on = (key: string, extra = {}) => flag(key, { groups: [{ rollout_percentage: 100 }] }, extra)
  /** What a record of the answers by key enumerates, as JSON.stringify of it writes them. */
  const enumerated = (input: EvaluationInput) => {
    const result = evaluateFlags(input)
    expect(result.answers.map((answer) => answer.key)).to.deep.equal(Object.keys(result.flags))
    expect(result.answers).to.deep.equal(Object.values(result.flags))
    return result.answers.map((answer) => `${answer.key}:${answer.failed ? answer.reason.code : answer.enabled}`)
  }
  const input = (flags: ReturnType<typeof on>[], extra: Partial<EvaluationInput> = {}): EvaluationInput => ({
    flags,
    distinctId: 'user-1',
    database: { status: 'skipped' },
    now: NOW,
    ...extra,
  })

  it('lists the answers in evaluation order when the keys are plain and distinct', () => {
    expect(enumerated(input([on('b'), on('a'), on('constructor'), on('__proto__')]))).to.deep.equal([
      'b:true',
      'a:true',
      'constructor:true',
      '__proto__:true',
    ])
  })

  it('lists array-index keys first, ascending, as a record does; other numeric texts keep their place', () => {
    const flags = [on('b'), on('42'), on('07'), on('7'), on('4294967295'), on('-1'), on('a')]
    expect(enumerated(input(flags))).to.deep.equal([
      '7:true',
      '42:true',
      'b:true',
      '07:true',
      '4294967295:true',
      '-1:true',
      'a:true',
    ])
  })

  it('lists the flags failed before evaluation first, and a repeated key once, where it first came', () => {
    const needsPerson = flag('needs-db', {
      groups: [{ properties: [{ key: 'email', value: 'x', type: 'person' }], rollout_percentage: 100 }],
    })
    const failedDatabase = input([on('first'), needsPerson, on('last')], { database: { status: 'failed' } })
    expect(enumerated(failedDatabase)).to.deep.equal(['needs-db:database_error', 'first:true', 'last:true'])
    const off = (key: string) => flag(key, { groups: [{ rollout_percentage: 0 }] })
    // the later flag's answer, in the earlier one's place
    expect(enumerated(input([on('twice'), on('other'), off('twice')]))).to.deep.equal(['twice:false', 'other:true'])
  })
})
