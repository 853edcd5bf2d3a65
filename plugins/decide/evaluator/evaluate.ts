import { DATABASE_ERROR, FlagEvaluationError, HASH_KEY_OVERRIDE_ERROR } from './errors.ts';
import { isFlagExcluded } from './filtering.ts';
import { evaluateFlag, type FlagMatch } from './flag.ts';
import { planFor, preparedFor } from './prepared.ts';
import { normalizeDistinctId } from './hash.ts';
import { resolveTimeZone } from './properties/timezone.ts';
import { reasonCode, reasonDescription } from './reasons.ts';
import { buildRequestContext } from './request-context.ts';
import { flagRequiresDatabase } from './requirements.ts';
import type { EvaluationInput, EvaluationResult, FlagDefinition, FlagResult } from './types.ts';

function answered(flag: FlagDefinition, match: FlagMatch): FlagResult {
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
  };
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
  };
}

const MISSING_DEPENDENCY: FlagMatch = {
  matches: false,
  variant: null,
  reason: 'missing_dependency',
  conditionIndex: null,
  hasPayload: false,
  payload: null,
};

function usesGroupAggregation(flag: FlagDefinition): boolean {
  const filters = flag.filters ?? {};
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) return true;
  return (filters.groups ?? []).some((set) => set.aggregation_group_type_index !== null && set.aggregation_group_type_index !== undefined);
}

/**
 * Evaluates a project's flags for one request, as PostHog's flags service
 * does: excluded flags are left out, dependencies are evaluated first, and
 * storage failures fail only the flags that needed storage (§11).
 */
export function evaluateFlags(input: EvaluationInput): EvaluationResult {
  const prepared = preparedFor(input.flags, input.prepared);
  const { flags, problems } = prepared;
  const distinctId = normalizeDistinctId(input.distinctId);
  const nowMillis = typeof input.now === 'number' ? input.now : input.now.getTime();
  const excluded = new Set(flags.filter((flag) => isFlagExcluded(flag, input)).map((flag) => flag.id));
  const plan = planFor(prepared, input.flagKeys ?? null);
  const evaluable = plan.stages.flat().filter((flag) => !excluded.has(flag.id));
  // no prototype: flag keys such as `constructor` or `toString` are valid PostHog keys
  const results: Record<string, FlagResult> = Object.create(null);
  let errors = plan.hasCycle;

  for (const flag of evaluable) {
    const problem = problems.get(flag.id);
    if (problem) results[flag.key] = failed(flag, 'flag_data_parsing_error', `Failed to parse flag data: ${problem}`);
  }
  errors ||= evaluable.some((flag) => problems.has(flag.id));
  if (input.hashKeyOverrideFailed) {
    errors = true;
    for (const flag of evaluable.filter((f) => f.ensure_experience_continuity && !problems.has(f.id))) {
      results[flag.key] = failed(flag, HASH_KEY_OVERRIDE_ERROR.code, HASH_KEY_OVERRIDE_ERROR.description);
    }
  }
  if (input.groupTypeMappingFailed && evaluable.some(usesGroupAggregation)) errors = true;
  if (input.database.status === 'failed') {
    const code = input.database.code ?? DATABASE_ERROR.code;
    const description = input.database.description ?? DATABASE_ERROR.description;
    for (const flag of evaluable.filter((f) => !problems.has(f.id) && flagRequiresDatabase(f, input.personPropertyOverrides))) {
      results[flag.key] = failed(flag, code, description);
      errors = true;
    }
  }

  const ctx = buildRequestContext(input, prepared.lookup, distinctId, resolveTimeZone(input.timezone), nowMillis);
  for (const id of excluded) ctx.results.set(id, false);
  for (const flag of evaluable) {
    if (results[flag.key]) continue;
    try {
      const match = plan.brokenIds.has(flag.id) ? MISSING_DEPENDENCY : evaluateFlag(flag, ctx);
      results[flag.key] = answered(flag, match);
      ctx.results.set(flag.id, match.matches ? (match.variant ?? true) : false);
    } catch (error) {
      errors = true;
      results[flag.key] =
        error instanceof FlagEvaluationError
          ? failed(flag, error.code, error.message)
          : failed(flag, 'internal_error', `Internal error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { flags: results, errorsWhileComputingFlags: errors };
}
