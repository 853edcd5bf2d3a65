import type { FlagDefinition } from './types.ts'

/**
 * Stored definitions are operator-written; the server refuses ones it cannot
 * deserialise. Here a malformed flag fails on its own (`flag_data_parsing_error`)
 * instead of breaking the request, and is planned as a flag without conditions.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isAbsent = (value: unknown) => value === null || value === undefined
const isIndex = (value: unknown) => isAbsent(value) || Number.isInteger(value)
const isNumberOrAbsent = (value: unknown) => isAbsent(value) || (typeof value === 'number' && Number.isFinite(value))

function conditionProblem(condition: unknown, path: string): string | null {
  if (!isRecord(condition)) return `${path} is not an object`
  if (!isNumberOrAbsent(condition.rollout_percentage)) return `${path}.rollout_percentage is not a number`
  if (!isAbsent(condition.variant) && typeof condition.variant !== 'string') return `${path}.variant is not a string`
  if (!isIndex(condition.aggregation_group_type_index)) return `${path}.aggregation_group_type_index is not an integer`
  if (isAbsent(condition.properties)) return null
  if (!Array.isArray(condition.properties)) return `${path}.properties is not a list`
  const bad = condition.properties.findIndex((filter) => !isRecord(filter) || typeof filter.key !== 'string')
  return bad < 0 ? null : `${path}.properties[${bad}] has no key`
}

function conditionsProblem(conditions: unknown, path: string): string | null {
  if (isAbsent(conditions)) return null
  if (!Array.isArray(conditions)) return `${path} is not a list`
  for (let i = 0; i < conditions.length; i++) {
    const problem = conditionProblem(conditions[i], `${path}[${i}]`)
    if (problem) return problem
  }
  return null
}

export function flagProblem(flag: FlagDefinition): string | null {
  const filters: unknown = flag.filters
  if (isAbsent(filters)) return null
  if (!isRecord(filters)) return 'filters is not an object'
  const conditions =
    conditionsProblem(filters.groups, 'filters.groups') ??
    conditionsProblem(filters.super_groups, 'filters.super_groups')
  if (conditions) return conditions
  if (!isIndex(filters.aggregation_group_type_index)) return 'filters.aggregation_group_type_index is not an integer'
  if (!isAbsent(filters.payloads) && !isRecord(filters.payloads)) return 'filters.payloads is not an object'
  const multivariate = filters.multivariate
  if (!isAbsent(multivariate)) {
    const variants = isRecord(multivariate) ? multivariate.variants : undefined
    if (!Array.isArray(variants)) return 'filters.multivariate.variants is not a list'
    const bad = variants.findIndex(
      (v) => !isRecord(v) || typeof v.key !== 'string' || typeof v.rollout_percentage !== 'number',
    )
    if (bad >= 0) return `filters.multivariate.variants[${bad}] needs a key and a rollout_percentage`
  }
  const holdout = filters.holdout
  if (
    !isAbsent(holdout) &&
    (!isRecord(holdout) || !Number.isInteger(holdout.id) || typeof holdout.exclusion_percentage !== 'number')
  ) {
    return 'filters.holdout needs an integer id and an exclusion_percentage'
  }
  return null
}

/** Flags with usable filters, plus the problem of each flag that had to be emptied. */
export function sanitizeFlags(flags: readonly FlagDefinition[]): {
  flags: FlagDefinition[]
  problems: Map<number, string>
} {
  const problems = new Map<number, string>()
  const sanitized = flags.map((flag) => {
    const problem = flagProblem(flag)
    if (problem === null) return { ...flag, filters: flag.filters ?? {} }
    problems.set(flag.id, problem)
    return { ...flag, filters: { groups: [] } }
  })
  return { flags: sanitized, problems }
}
