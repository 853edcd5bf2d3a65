/**
 * Match reasons and their ranking (§10.2). When no condition set matches, the
 * highest-ranked reason seen is reported with its set's index; on a tie the
 * later set wins.
 */

export type ReasonKind =
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'condition_match'
  | 'out_of_rollout_bound'
  | 'no_condition_match'
  | 'no_condition_match_groups_not_evaluated'
  | 'no_group_type'
  | 'flag_disabled'
  | 'missing_dependency'

const SCORE: Record<ReasonKind, number> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_condition_match_groups_not_evaluated: 2,
  no_group_type: 1,
  flag_disabled: 0,
  missing_dependency: -1,
}

export function outranks(candidate: ReasonKind, current: ReasonKind): boolean {
  return SCORE[candidate] >= SCORE[current]
}

/** The variant that only enriches the description still serialises as `no_condition_match`. */
export function reasonCode(kind: ReasonKind): string {
  return kind === 'no_condition_match_groups_not_evaluated' ? 'no_condition_match' : kind
}

export function reasonDescription(kind: ReasonKind, index: number | null): string {
  switch (kind) {
    case 'condition_match':
      return `Matched condition set ${(index ?? 0) + 1}`
    case 'no_condition_match':
      return 'No matching condition set'
    case 'no_condition_match_groups_not_evaluated':
      return 'No matching condition set (group conditions were not evaluated because no group type was provided)'
    case 'out_of_rollout_bound':
      return 'Out of rollout bound'
    case 'no_group_type':
      return 'No group type'
    case 'super_condition_value':
      return 'Super condition value'
    case 'holdout_condition_value':
      return 'Holdout condition value'
    case 'flag_disabled':
      return 'Feature flag is disabled'
    case 'missing_dependency':
      return 'Flag cannot be evaluated due to missing dependency'
  }
}
