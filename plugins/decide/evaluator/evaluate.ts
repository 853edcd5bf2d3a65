import { DATABASE_ERROR, FlagEvaluationError, HASH_KEY_OVERRIDE_ERROR } from './errors.ts'
import { evaluateFlag, type FlagMatch, type FlagTrace } from './flag.ts'
import type { RequestContext } from './context.ts'
import { preparedFor, type PreparedFlags, type Selection } from './prepared.ts'
import { normalizeDistinctId } from './hash.ts'
import { resolveTimeZone } from './properties/timezone.ts'
import { reasonCode, reasonDescription } from './reasons.ts'
import { buildRequestContext } from './request-context.ts'
import { flagRequiresDatabase } from './requirements.ts'
import type { EvaluationInput, EvaluationResult, FlagDefinition, FlagResult } from './types.ts'

/** A flag's answers already made with these definitions: a flag has few outcomes, and requests repeat them. */
const OUTCOMES_PER_FLAG = 32

/**
 * The flag's answer for `match`, shared by every request with the same outcome (frozen, so that a
 * caller cannot change another request's answer): making 50 answers of three objects per request
 * was a tenth of the evaluation, and the response writer remembers a shared answer's JSON text.
 */
function answered(prepared: PreparedFlags, flag: FlagDefinition, match: FlagMatch): FlagResult {
  // a compiled flag's matches are shared (frozen) and its own: their answer is found by identity
  // (asked first: Object.isFrozen is a call into the runtime, and most matches are shared)
  const shared = prepared.answers.get(match)
  if (shared) return shared
  const known = prepared.outcomes(flag)
  for (const { answer, kind } of known) {
    if (
      kind === match.reason &&
      answer.enabled === match.matches &&
      answer.variant === match.variant &&
      answer.reason.condition_index === match.conditionIndex &&
      answer.hasPayload === match.hasPayload &&
      answer.metadata.payload === match.payload
    ) {
      return answer
    }
  }
  const answer = makeAnswer(flag, match)
  if (known.length < OUTCOMES_PER_FLAG) {
    Object.freeze(answer.reason)
    Object.freeze(answer.metadata)
    known.push({ answer: Object.freeze(answer), kind: match.reason })
    if (Object.isFrozen(match)) prepared.answers.set(match, answer)
  }
  return answer
}

function makeAnswer(flag: FlagDefinition, match: FlagMatch): FlagResult {
  return {
    key: flag.key,
    enabled: match.matches,
    variant: match.variant,
    failed: false,
    reason: {
      code: reasonCode(match.reason),
      condition_index: match.conditionIndex,
      description: reasonDescription(match.reason, match.conditionIndex),
    },
    metadata: { id: flag.id, version: flag.version ?? 0, description: null, payload: match.payload },
    hasPayload: match.hasPayload,
  }
}

function failed(flag: FlagDefinition, code: string, description: string): FlagResult {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    failed: true,
    reason: { code, condition_index: null, description },
    metadata: { id: flag.id, version: flag.version ?? 0, description: null, payload: null },
    hasPayload: false,
  }
}

const MISSING_DEPENDENCY: FlagMatch = {
  matches: false,
  variant: null,
  reason: 'missing_dependency',
  conditionIndex: null,
  hasPayload: false,
  payload: null,
}

function usesGroupAggregation(flag: FlagDefinition): boolean {
  const filters = flag.filters ?? {}
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) return true
  return (filters.groups ?? []).some(
    (set) => set.aggregation_group_type_index !== null && set.aggregation_group_type_index !== undefined,
  )
}

/** When an evaluation in slices gives the event loop back; `pause` is the caller's (setImmediate in the service). */
export interface EvaluationSlices {
  /** Evaluate this long at most before pausing; one flag is never split. */
  sliceMs: number
  /** Monotonic milliseconds. */
  clock: () => number
  pause: () => Promise<void>
}

/**
 * Evaluates a project's flags for one request, as PostHog's flags service
 * does: excluded flags are left out, dependencies are evaluated first, and
 * storage failures fail only the flags that needed storage (§11).
 */
export function evaluateFlags(input: EvaluationInput): EvaluationResult {
  // a plain loop: the generator below (for slices) cost a tenth of an evaluation in its frame alone
  const run = new Evaluation(input)
  const count = run.evaluable.length
  for (let i = 0; i < count; i++) run.flag(i)
  return run.result()
}

/**
 * The slice's clock is read before every this many flags: a read costs about as much as an
 * ordinary flag's evaluation, and a slice (10 ms in the service) is over a hundred such flags.
 */
const CLOCK_EVERY_FLAGS = 4

/**
 * evaluateFlags, pausing between flags once a slice has passed (noticed within CLOCK_EVERY_FLAGS
 * flags): a request with costly flags then delays other requests (and health checks) by about one
 * slice at a time, not by its whole evaluation.
 */
export async function evaluateFlagsInSlices(
  input: EvaluationInput,
  slices: EvaluationSlices,
): Promise<EvaluationResult> {
  const run = new Evaluation(input)
  let sliceStarted = slices.clock()
  for (let i = 0; i < run.evaluable.length; i++) {
    if (i % CLOCK_EVERY_FLAGS === 0 && i > 0 && slices.clock() - sliceStarted >= slices.sliceMs) {
      await slices.pause()
      sliceStarted = slices.clock()
    }
    run.flag(i)
  }
  return run.result()
}

/**
 * How explain.ts watches an evaluation: the request context once built, and a trace per flag.
 * Flags are then evaluated by the reference interpreter (flag.ts), which tests hold equal to the
 * compiled flags, since only it reports what each condition set did.
 */
export interface EvaluationObserver {
  context(ctx: RequestContext): void
  flag(flag: FlagDefinition): FlagTrace
}

/** evaluateFlags, telling `observer` what each flag's condition sets did (explain.ts). */
export function observeEvaluation(input: EvaluationInput, observer: EvaluationObserver): EvaluationResult {
  const run = new Evaluation(input, observer)
  for (let i = 0; i < run.evaluable.length; i++) run.flag(i)
  return run.result()
}

/**
 * An evaluation's answers in order, the record by key made only for a reader that asks for it: the
 * response writers walk the answers, and filling a prototype-less record of 50 keys (a dictionary,
 * grown five times) was more than a tenth of the evaluation's own allocations.
 */
class EvaluatedFlags implements EvaluationResult {
  #byKey: Record<string, FlagResult> | undefined

  constructor(
    readonly answers: readonly FlagResult[],
    readonly errorsWhileComputingFlags: boolean,
    byKey?: Record<string, FlagResult>,
  ) {
    this.#byKey = byKey
  }

  get flags(): Record<string, FlagResult> {
    if (this.#byKey === undefined) {
      const byKey: Record<string, FlagResult> = Object.create(null)
      for (const answer of this.answers) byKey[answer.key] = answer
      this.#byKey = byKey
    }
    return this.#byKey
  }
}

/** One request's evaluation: the failures decided before any flag runs, then `flag` for each evaluable flag in order. */
class Evaluation {
  readonly evaluable: readonly FlagDefinition[]
  private readonly prepared: PreparedFlags
  private readonly selection: Selection
  private readonly ctx: RequestContext
  /** Answers by evaluable index, while a record by key would enumerate them in that order. */
  private readonly answers: FlagResult[] = []
  /**
   * The answers by key instead, when the order differs: a key repeats or is an array index (a
   * record lists those first), or a flag failed before the others were evaluated (it comes first).
   * No prototype: flag keys such as `constructor` or `toString` are valid PostHog keys.
   */
  private byKey: Record<string, FlagResult> | null
  /** Whether any flag was answered before the loop (then the loop skips it). */
  private readonly anyFailedEarly: boolean
  private errors: boolean

  constructor(
    private readonly input: EvaluationInput,
    private readonly observer?: EvaluationObserver,
  ) {
    const prepared = preparedFor(input.flags, input.prepared)
    this.prepared = prepared
    const { problems } = prepared
    const distinctId = normalizeDistinctId(input.distinctId)
    const nowMillis = typeof input.now === 'number' ? input.now : input.now.getTime()
    const selection = prepared.selection(input.flagKeys ?? null, input)
    const { plan, evaluable, excludedIds } = selection
    this.selection = selection
    this.evaluable = evaluable
    this.byKey = selection.keysInOrder ? null : Object.create(null)
    let errors = plan.hasCycle
    let anyFailedEarly = false

    if (problems.size)
      for (const flag of evaluable) {
        const problem = problems.get(flag.id)
        if (problem) {
          this.failEarly(failed(flag, 'flag_data_parsing_error', `Failed to parse flag data: ${problem}`))
          errors = anyFailedEarly = true
        }
      }
    if (input.hashKeyOverrideFailed) {
      errors = true
      for (const flag of evaluable.filter((f) => f.ensure_experience_continuity && !problems.has(f.id))) {
        this.failEarly(failed(flag, HASH_KEY_OVERRIDE_ERROR.code, HASH_KEY_OVERRIDE_ERROR.description))
        anyFailedEarly = true
      }
    }
    if (input.groupTypeMappingFailed && evaluable.some(usesGroupAggregation)) errors = true
    if (input.database.status === 'failed') {
      const code = input.database.code ?? DATABASE_ERROR.code
      const description = input.database.description ?? DATABASE_ERROR.description
      for (const flag of evaluable.filter(
        (f) => !problems.has(f.id) && flagRequiresDatabase(f, input.personPropertyOverrides),
      )) {
        this.failEarly(failed(flag, code, description))
        errors = anyFailedEarly = true
      }
    }
    this.errors = errors
    this.anyFailedEarly = anyFailedEarly

    this.ctx = buildRequestContext(input, prepared.lookup, distinctId, resolveTimeZone(input.timezone), nowMillis)
    this.observer?.context(this.ctx)
    for (const id of excludedIds) this.ctx.results.set(id, false)
  }

  /**
   * Evaluates the flag at `index` of `evaluable` (in order: its dependencies' values are read from
   * the context). Per-flag facts come from the selection's arrays by index, not from lookups.
   */
  flag(index: number): void {
    const { ctx, observer, prepared, selection } = this
    const flag = selection.evaluable[index]!
    if (this.anyFailedEarly && this.byKey![flag.key]) return
    try {
      const { brokenIds } = selection.plan
      let match: FlagMatch
      if (brokenIds.size && brokenIds.has(flag.id)) match = MISSING_DEPENDENCY
      else if (observer) match = evaluateFlag(flag, ctx, observer.flag(flag))
      else if (this.input.interpret) match = evaluateFlag(flag, ctx)
      else {
        const compiled = selection.compiled
        match = (compiled[index] ??= prepared.compiled(flag)).evaluate(ctx)
      }
      this.answer(index, answered(prepared, flag, match))
      if (selection.readByOthers[index]) ctx.results.set(flag.id, match.matches ? (match.variant ?? true) : false)
    } catch (error) {
      this.errors = true
      this.answer(
        index,
        error instanceof FlagEvaluationError
          ? failed(flag, error.code, error.message)
          : failed(flag, 'internal_error', `Internal error: ${error instanceof Error ? error.message : String(error)}`),
      )
    }
  }

  /** A failure decided before the loop: recorded by key, so that it comes first and the loop skips the flag. */
  private failEarly(answer: FlagResult): void {
    this.byKey ??= Object.create(null) as Record<string, FlagResult>
    this.byKey[answer.key] = answer
  }

  private answer(index: number, answer: FlagResult): void {
    if (this.byKey === null) this.answers[index] = answer
    else this.byKey[answer.key] = answer
  }

  result(): EvaluationResult {
    const byKey = this.byKey
    if (byKey === null) return new EvaluatedFlags(this.answers, this.errors)
    return new EvaluatedFlags(Object.values(byKey), this.errors, byKey)
  }
}
