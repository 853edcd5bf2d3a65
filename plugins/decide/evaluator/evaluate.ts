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
  const shared = Object.isFrozen(match) ? prepared.answers.get(match) : undefined
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

/** One request's evaluation: the failures decided before any flag runs, then `flag` for each evaluable flag in order. */
class Evaluation {
  readonly evaluable: readonly FlagDefinition[]
  private readonly prepared: PreparedFlags
  private readonly selection: Selection
  private readonly ctx: RequestContext
  // no prototype: flag keys such as `constructor` or `toString` are valid PostHog keys
  private readonly results: Record<string, FlagResult> = Object.create(null)
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
    const results = this.results
    let errors = plan.hasCycle
    let anyFailedEarly = false

    if (problems.size)
      for (const flag of evaluable) {
        const problem = problems.get(flag.id)
        if (problem) {
          results[flag.key] = failed(flag, 'flag_data_parsing_error', `Failed to parse flag data: ${problem}`)
          errors = anyFailedEarly = true
        }
      }
    if (input.hashKeyOverrideFailed) {
      errors = true
      for (const flag of evaluable.filter((f) => f.ensure_experience_continuity && !problems.has(f.id))) {
        results[flag.key] = failed(flag, HASH_KEY_OVERRIDE_ERROR.code, HASH_KEY_OVERRIDE_ERROR.description)
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
        results[flag.key] = failed(flag, code, description)
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
    const { results, ctx, observer, prepared, selection } = this
    const flag = selection.evaluable[index]!
    if (this.anyFailedEarly && results[flag.key]) return
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
      results[flag.key] = answered(prepared, flag, match)
      if (selection.readByOthers[index]) ctx.results.set(flag.id, match.matches ? (match.variant ?? true) : false)
    } catch (error) {
      this.errors = true
      results[flag.key] =
        error instanceof FlagEvaluationError
          ? failed(flag, error.code, error.message)
          : failed(flag, 'internal_error', `Internal error: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  result(): EvaluationResult {
    return { flags: this.results, errorsWhileComputingFlags: this.errors }
  }
}
