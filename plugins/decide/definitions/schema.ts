/**
 * TypeBox schemas of flag and cohort definitions as PostHog writes them (flags.md §1, §9). Known
 * fields are checked; unknown ones are allowed (PostHog adds fields over time) but not stored.
 * A failure is a 400 whose `attr` is the dotted path of the offending value.
 */
import { Type } from 'typebox'
import type { Static, TSchema } from 'typebox'
import { httpError } from '../../../core/plugin-api.ts'
import { MAX_COHORT_FILTER_DEPTH } from '../evaluator/cohort-tree.ts'

const open = { additionalProperties: true } as const
const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

/** 0–4: the five group types a project can have. */
export const GroupTypeIndex = Type.Integer({ minimum: 0, maximum: 4 })
const Percentage = Type.Number({ minimum: 0, maximum: 100 })
/** Null or empty means distinct_id, as in PostHog's definitions. */
const BucketingIdentifier = Nullable(
  Type.Union([Type.Literal('distinct_id'), Type.Literal('device_id'), Type.Literal('')]),
)

export const PropertyFilterSchema = Type.Object(
  {
    key: Type.String(),
    value: Type.Optional(Type.Unknown()),
    operator: Nullable(Type.String()),
    type: Nullable(Type.String()),
    group_type_index: Nullable(GroupTypeIndex),
    negation: Nullable(Type.Boolean()),
    dependency_chain: Type.Optional(Type.Array(Type.String())),
  },
  open,
)

export const ConditionSchema = Type.Object(
  {
    properties: Nullable(Type.Array(PropertyFilterSchema)),
    rollout_percentage: Nullable(Percentage),
    variant: Nullable(Type.String()),
    aggregation_group_type_index: Nullable(GroupTypeIndex),
  },
  open,
)

export const FiltersSchema = Type.Object(
  {
    groups: Nullable(Type.Array(ConditionSchema)),
    multivariate: Nullable(
      Type.Object(
        {
          variants: Type.Array(
            Type.Object(
              { key: Type.String({ minLength: 1 }), name: Nullable(Type.String()), rollout_percentage: Percentage },
              open,
            ),
          ),
        },
        open,
      ),
    ),
    payloads: Nullable(Type.Record(Type.String(), Type.Unknown())),
    aggregation_group_type_index: Nullable(GroupTypeIndex),
    super_groups: Nullable(Type.Array(ConditionSchema)),
    feature_enrollment: Nullable(Type.Boolean()),
    holdout: Nullable(Type.Object({ id: Type.Integer(), exclusion_percentage: Percentage }, open)),
    version: Nullable(Type.Integer()),
    bucketing_identifier: BucketingIdentifier,
  },
  open,
)

/** The optional fields of a flag, shared by the import format and the REST API. */
export const FlagOptionalFields = {
  name: Nullable(Type.String()),
  deleted: Type.Optional(Type.Boolean()),
  ensure_experience_continuity: Nullable(Type.Boolean()),
  evaluation_runtime: Nullable(Type.Union([Type.Literal('all'), Type.Literal('client'), Type.Literal('server')])),
  evaluation_tags: Nullable(Type.Array(Type.String())),
  evaluation_contexts: Nullable(Type.Array(Type.String())),
  bucketing_identifier: BucketingIdentifier,
  has_encrypted_payloads: Nullable(Type.Boolean()),
  is_remote_configuration: Nullable(Type.Boolean()),
}

/** A flag key as imported: any non-empty text (REST creation is stricter). */
export const FlagKey = Type.String({ minLength: 1, maxLength: 400 })

/** One flag of the local-evaluation format (what PostHog's /flags/definitions returns). */
export const ImportedFlagSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    key: FlagKey,
    active: Type.Boolean(),
    version: Nullable(Type.Integer({ minimum: 0 })),
    filters: FiltersSchema,
    ...FlagOptionalFields,
  },
  open,
)

export const DefinitionsBodySchema = Type.Object(
  {
    flags: Type.Array(ImportedFlagSchema),
    group_type_mapping: Type.Optional(
      Type.Record(Type.String({ pattern: '^[0-4]$' }), Type.String({ minLength: 1, maxLength: 400 }), {
        additionalProperties: false,
      }),
    ),
    cohorts: Type.Optional(
      Type.Record(Type.String({ pattern: '^[1-9][0-9]{0,15}$' }), Type.Record(Type.String(), Type.Unknown()), {
        additionalProperties: false,
      }),
    ),
  },
  open,
)

export type ImportedFlag = Static<typeof ImportedFlagSchema>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
/** The top group is depth 0; a group at depth d holds entries at PostHog's depth d (64 at most). */
const MAX_GROUP_DEPTH = MAX_COHORT_FILTER_DEPTH + 1

/**
 * A cohort's property group: `{type: 'AND' | 'OR', values: [...]}` whose values are groups again
 * or filters with a `key`. Throws a 400 at the first offending path.
 */
export function checkPropertyGroup(value: unknown, path: string, depth = 0): void {
  const fail = (reason: string, at = path) => {
    throw httpError('invalid_input', `${at}: ${reason}`, at)
  }
  if (!isRecord(value)) return fail('must be a property group {type, values}')
  if (depth === 0 ? value.type !== 'AND' && value.type !== 'OR' : typeof value.type !== 'string')
    return fail('must be "AND" or "OR"', `${path}.type`)
  if (!Array.isArray(value.values)) return fail('must be a list', `${path}.values`)
  if (depth >= MAX_GROUP_DEPTH) return fail(`property groups nest at most ${MAX_GROUP_DEPTH} deep`)
  value.values.forEach((child, i) => {
    const at = `${path}.values.${i}`
    if (isRecord(child) && 'values' in child) return checkPropertyGroup(child, at, depth + 1)
    if (!isRecord(child) || typeof child.key !== 'string')
      fail('must be a property filter with a key, or a property group', at)
    if (isRecord(child) && child.type === 'cohort' && !/^\d+$/.test(String(child.value)))
      fail('must be a cohort id', `${at}.value`)
  })
}
