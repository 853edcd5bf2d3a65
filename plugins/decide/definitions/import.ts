/**
 * `{flags, group_type_mapping, cohorts}` in PostHog's local-evaluation format → documents to store,
 * after validation (400 naming the path; nothing is written when anything is wrong). Flag ids are
 * kept, so server-format dependencies (by id) keep working; SDK-format dependencies (by key, with
 * a `dependency_chain`) are turned back into ids. Cohorts are bare property groups, as PostHog
 * sends them, or cohort objects (`{name, is_static, filters}`), the only way to carry static
 * cohorts (PostHog leaves them out of its export).
 */
import { parseWith, httpError } from '../../../core/plugin-api.ts'
import type { FlagFilters } from '../evaluator/index.ts'
import type { CohortDocument, FlagDocument } from '../store/documents.ts'
import { DefinitionsBodySchema, checkPropertyGroup } from './schema.ts'
import { DEFAULT_REGEX_BUDGET_MS, checkCohortRegexes, checkFlagRegexes } from './regex-limit.ts'
import type { ImportedFlag } from './schema.ts'

export type NewFlag = Omit<FlagDocument, 'project_id' | 'generation' | 'created_at' | 'updated_at'>
export type NewCohort = Omit<CohortDocument, 'project_id' | 'generation' | 'created_at' | 'updated_at'>

export interface ImportedDefinitions {
  flags: NewFlag[]
  cohorts: NewCohort[]
  /** Index (as written by the source) → group type name. */
  groupTypeMapping: Record<string, string>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const invalid = (attr: string, reason: string) => httpError('invalid_input', `${attr}: ${reason}`, attr)

/** The optional PostHog fields of a flag, copied when present. */
export const OPTIONAL_FIELDS = [
  'evaluation_runtime',
  'evaluation_tags',
  'evaluation_contexts',
  'bucketing_identifier',
  'has_encrypted_payloads',
  'is_remote_configuration',
] as const

export function flagDocument(flag: ImportedFlag, filters: FlagFilters): NewFlag {
  const doc: NewFlag = {
    id: flag.id,
    key: flag.key,
    name: flag.name ?? null,
    active: flag.active,
    deleted: flag.deleted ?? false,
    ensure_experience_continuity: flag.ensure_experience_continuity ?? false,
    version: flag.version ?? 0,
    filters,
  }
  for (const field of OPTIONAL_FIELDS) if (flag[field] !== undefined) Object.assign(doc, { [field]: flag[field] })
  return doc
}

/** SDK-format dependencies (they carry a chain) point at a key: store the flag id instead. */
function dependenciesById(filters: FlagFilters, idOfKey: Map<string, number>): FlagFilters {
  const copy = structuredClone(filters)
  for (const group of copy.groups ?? []) {
    for (const filter of group.properties ?? []) {
      if (filter.type !== 'flag' || filter.dependency_chain === undefined) continue
      const id = idOfKey.get(filter.key)
      if (id !== undefined) filter.key = String(id)
      delete filter.dependency_chain
    }
  }
  return copy
}

function readCohort(id: string, value: Record<string, unknown>, regexBudgetMs: number): NewCohort {
  const base = { id: Number(id), version: 0, deleted: false, description: '', cohort_type: null }
  if ('values' in value && 'type' in value) {
    checkPropertyGroup(value, `cohorts.${id}`)
    checkCohortRegexes(`cohort ${id}`, value, `cohorts.${id}`, regexBudgetMs)
    return { ...base, name: null, is_static: false, filters: { properties: value } }
  }
  const at = `cohorts.${id}`
  if (value.name !== undefined && value.name !== null && typeof value.name !== 'string')
    throw invalid(`${at}.name`, 'must be a string')
  if (value.is_static !== undefined && typeof value.is_static !== 'boolean')
    throw invalid(`${at}.is_static`, 'must be a boolean')
  if (value.deleted !== undefined && typeof value.deleted !== 'boolean')
    throw invalid(`${at}.deleted`, 'must be a boolean')
  const isStatic = value.is_static === true
  if (!isStatic) {
    const properties = isRecord(value.filters) ? value.filters.properties : undefined
    checkPropertyGroup(properties, `${at}.filters.properties`)
    if (value.deleted !== true)
      checkCohortRegexes(`cohort ${id}`, properties, `${at}.filters.properties`, regexBudgetMs)
  }
  return {
    ...base,
    name: typeof value.name === 'string' ? value.name : null,
    description: typeof value.description === 'string' ? value.description : '',
    is_static: isStatic,
    deleted: value.deleted === true,
    cohort_type: typeof value.cohort_type === 'string' ? value.cohort_type : null,
    filters: isStatic ? {} : { properties: (value.filters as Record<string, unknown>).properties },
  }
}

/** Duplicate ids, duplicate live keys and reserved names: 400 at the second occurrence. */
function checkFlagIdentities(flags: ImportedFlag[]): void {
  const ids = new Set<number>()
  const keys = new Set<string>()
  flags.forEach((flag, i) => {
    if (ids.has(flag.id)) throw invalid(`flags.${i}.id`, `another flag already has id ${flag.id}`)
    ids.add(flag.id)
    if (flag.key === '__proto__') throw invalid(`flags.${i}.key`, '"__proto__" cannot be a flag key')
    if (flag.deleted) return
    if (keys.has(flag.key)) throw invalid(`flags.${i}.key`, `another flag already has key ${flag.key}`)
    keys.add(flag.key)
  })
}

/** The definitions to store, or a 400 naming the first problem; `regexBudgetMs` is the decide option (regex-limit.ts). */
export function readDefinitions(body: unknown, regexBudgetMs = DEFAULT_REGEX_BUDGET_MS): ImportedDefinitions {
  const parsed = parseWith(DefinitionsBodySchema, body)
  checkFlagIdentities(parsed.flags)
  parsed.flags.forEach((flag, i) => {
    if (!flag.deleted) checkFlagRegexes(flag.key, flag.filters, `flags.${i}.filters`, regexBudgetMs)
  })
  const mapping = parsed.group_type_mapping ?? {}
  const names = new Set<string>()
  for (const [index, name] of Object.entries(mapping)) {
    if (names.has(name)) throw invalid(`group_type_mapping.${index}`, `group type ${name} is mapped twice`)
    names.add(name)
  }
  const idOfKey = new Map(parsed.flags.filter((flag) => !flag.deleted).map((flag) => [flag.key, flag.id]))
  return {
    flags: parsed.flags.map((flag) => flagDocument(flag, dependenciesById(flag.filters as FlagFilters, idOfKey))),
    cohorts: Object.entries(parsed.cohorts ?? {}).map(([id, value]) => readCohort(id, value, regexBudgetMs)),
    groupTypeMapping: { ...mapping },
  }
}

/** Rewrites every group type index of a flag through `translation` (indexes not in it are kept). */
export function remapGroupTypeIndexes(filters: FlagFilters, translation: ReadonlyMap<number, number>): FlagFilters {
  const map = (index: number | null | undefined) =>
    typeof index === 'number' ? (translation.get(index) ?? index) : index
  const copy = structuredClone(filters)
  if (copy.aggregation_group_type_index !== undefined)
    copy.aggregation_group_type_index = map(copy.aggregation_group_type_index)
  for (const group of [...(copy.groups ?? []), ...(copy.super_groups ?? [])]) {
    if (group.aggregation_group_type_index !== undefined)
      group.aggregation_group_type_index = map(group.aggregation_group_type_index)
    for (const filter of group.properties ?? []) {
      if (filter.group_type_index !== undefined) filter.group_type_index = map(filter.group_type_index)
    }
  }
  return copy
}
