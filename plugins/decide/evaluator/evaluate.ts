import { DATABASE_ERROR, FlagEvaluationError, HASH_KEY_OVERRIDE_ERROR } from './errors.ts'
import { evaluateFlag, type FlagMatch, type FlagTrace } from './flag.ts'
import type { RequestContext } from './context.ts'
import { preparedFor, type PreparedFlags } from './prepared.ts'
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
  const steps = evaluation(input, null)
  let step = steps.next()
  while (!step.done) step = steps.next()
  return step.value
}

/**
 * evaluateFlags, pausing between flags once a slice has passed: a request with costly flags then
 * delays other requests (and health checks) by one slice at a time, not by its whole evaluation.
 */
export async function evaluateFlagsInSlices(
  input: EvaluationInput,
  slices: EvaluationSlices,
): Promise<EvaluationResult> {
  const steps = evaluation(input, slices)
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value
    await slices.pause()
  }
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
  const steps = evaluation(input, null, observer)
  let step = steps.next()
  while (!step.done) step = steps.next()
  return step.value
}

/** The evaluation, yielding between flags when a slice has passed (never without slices). */
function* evaluation(
  input: EvaluationInput,
  slices: Pick<EvaluationSlices, 'sliceMs' | 'clock'> | null,
  observer?: EvaluationObserver,
): Generator<void, EvaluationResult, void> {
  const prepared = preparedFor(input.flags, input.prepared)
  const { problems } = prepared
  const distinctId = normalizeDistinctId(input.distinctId)
  const nowMillis = typeof input.now === 'number' ? input.now : input.now.getTime()
  const { plan, evaluable, excludedIds } = prepared.selection(input.flagKeys ?? null, input)
  // no prototype: flag keys such as `constructor` or `toString` are valid PostHog keys
  const results: Record<string, FlagResult> = Object.create(null)
  let errors = plan.hasCycle

  for (const flag of evaluable) {
    const problem = problems.get(flag.id)
    if (problem) results[flag.key] = failed(flag, 'flag_data_parsing_error', `Failed to parse flag data: ${problem}`)
  }
  errors ||= evaluable.some((flag) => problems.has(flag.id))
  if (input.hashKeyOverrideFailed) {
    errors = true
    for (const flag of evaluable.filter((f) => f.ensure_experience_continuity && !problems.has(f.id))) {
      results[flag.key] = failed(flag, HASH_KEY_OVERRIDE_ERROR.code, HASH_KEY_OVERRIDE_ERROR.description)
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
      errors = true
    }
  }

  const ctx = buildRequestContext(input, prepared.lookup, distinctId, resolveTimeZone(input.timezone), nowMillis)
  observer?.context(ctx)
  for (const id of excludedIds) ctx.results.set(id, false)
  let sliceStarted = slices ? slices.clock() : 0
  for (const flag of evaluable) {
    if (results[flag.key]) continue
    if (slices && slices.clock() - sliceStarted >= slices.sliceMs) {
      yield
      sliceStarted = slices.clock()
    }
    try {
      const match = plan.brokenIds.has(flag.id)
        ? MISSING_DEPENDENCY
        : observer
          ? evaluateFlag(flag, ctx, observer.flag(flag))
          : input.interpret
            ? evaluateFlag(flag, ctx)
            : prepared.compiled(flag).evaluate(ctx)
      results[flag.key] = answered(prepared, flag, match)
      ctx.results.set(flag.id, match.matches ? (match.variant ?? true) : false)
    } catch (error) {
      errors = true
      results[flag.key] =
        error instanceof FlagEvaluationError
          ? failed(flag, error.code, error.message)
          : failed(flag, 'internal_error', `Internal error: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return { flags: results, errorsWhileComputingFlags: errors }
}
