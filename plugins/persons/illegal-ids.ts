/**
 * Distinct ids that are never merge partners (capture.md §2.7): values that come from bugs or
 * placeholders, where merging would fold unrelated users into one person.
 */
const CASE_INSENSITIVE = [
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
]
/** `NaN` is illegal but `nan` is not: these compare exactly. */
const CASE_SENSITIVE = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']

/** SDKs have been seen sending these wrapped in quotes, so the quoted forms count too. */
const withQuotes = (ids: string[]) => ids.flatMap((id) => [id, `'${id}'`, `"${id}"`])

const ILLEGAL_ANY_CASE = new Set(withQuotes(CASE_INSENSITIVE))
const ILLEGAL_EXACT = new Set(withQuotes(CASE_SENSITIVE))

/** Lower-cases without trimming, as PostHog does: `" guest"` stays legal. */
export function isIllegalDistinctId(id: string): boolean {
  return id.trim() === '' || ILLEGAL_ANY_CASE.has(id.toLowerCase()) || ILLEGAL_EXACT.has(id)
}
