/**
 * `GET /api/projects/:id/persons?distinct_id=`: the person with all its distinct ids.
 * `GET /api/projects/:id/persons?search=<text>` and `?property=<key>&value=<value>`: a page of the
 * persons found (search.ts), `{results, next, searchable_properties}`, `next` the URL of the next
 * page (`&cursor=`). Mounted under /api, so the core's admin key check covers it.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Db } from 'mongodb'
import type { HttpKit } from '../../core/plugin-api.ts'
import { MAX_DISTINCT_ID_CHARS, httpError } from '../../core/plugin-api.ts'
import { getDistinctIdsOfPerson, getPersonByDistinctId } from './person-store.ts'
import { PersonSearch } from './search.ts'
import type { PersonQuery, SearchPosition } from './search.ts'

const DEFAULT_LIMIT = 25
const MAX_LIMIT = 100
/** A searched text is at most as long as a distinct id; an exact value at most this. */
const MAX_VALUE_CHARS = 1000

export function mountPersonRoute(router: Router, db: Db, http: HttpKit, searchable: readonly string[]): void {
  const search = new PersonSearch(db, searchable)
  router.get('/api/projects/:id/persons', async (ctx) => {
    const query = http.query(ctx)
    if (
      query.distinct_id === undefined &&
      (query.search !== undefined || query.property !== undefined || query.value !== undefined)
    )
      return searchPersons(ctx, http, search, query)
    const projectId = Number(ctx.params.id)
    if (!Number.isSafeInteger(projectId) || projectId <= 0)
      throw httpError('not_found', `no project with id ${ctx.params.id}`, 'id')
    const distinctId = ctx.query.distinct_id
    if (typeof distinctId !== 'string' || distinctId === '')
      throw httpError(
        'required',
        'give the person to look up as ?distinct_id=, or search with ?search= or ?property=&value=',
        'distinct_id',
      )
    const person = await getPersonByDistinctId(db, projectId, distinctId)
    if (!person) throw httpError('not_found', `no person has the distinct_id "${distinctId}"`, 'distinct_id')
    ctx.body = {
      id: person.id,
      distinct_ids: await getDistinctIdsOfPerson(db, projectId, person.id),
      properties: person.properties,
      is_identified: person.is_identified,
      created_at: person.created_at,
    }
  })
}

async function searchPersons(
  ctx: Context,
  http: HttpKit,
  search: PersonSearch,
  params: Record<string, string | undefined>,
): Promise<void> {
  const project = await http.projectParam(ctx)
  const query = personQuery(params, search.properties)
  const limit = limitOf(params.limit)
  const fingerprint = JSON.stringify(query)
  const after = params.cursor === undefined ? undefined : decodeCursor(params.cursor, fingerprint)
  const hits = await search.find(project.id, query, limit + 1, after)
  const page = http.cursorPage(ctx, hits, limit, 'cursor', (last) => encodeCursor(last.position, fingerprint))
  ctx.body = {
    results: page.results.map((hit) => hit.result),
    next: page.next,
    searchable_properties: search.properties,
  }
}

function personQuery(params: Record<string, string | undefined>, searchable: readonly string[]): PersonQuery {
  const { search, property, value } = params
  if (search !== undefined) {
    if (property !== undefined || value !== undefined)
      throw httpError('invalid_input', 'give either ?search= or ?property=&value=, not both', 'search')
    if (search === '') throw httpError('required', 'give the text to search for as ?search=', 'search')
    if (search.length > MAX_DISTINCT_ID_CHARS)
      throw httpError('invalid_input', `?search= is at most ${MAX_DISTINCT_ID_CHARS} characters`, 'search')
    return { kind: 'prefix', text: search }
  }
  if (property === undefined || property === '')
    throw httpError('required', 'give the property to match as ?property= (with ?value=)', 'property')
  if (!searchable.includes(property))
    throw httpError(
      'invalid_input',
      `the property "${property}" is not searchable: searchable are ${searchable.map((key) => `"${key}"`).join(', ') || 'none'}; add it to the persons plugin's searchableProperties option (it is then indexed)`,
      'property',
    )
  if (value === undefined || value === '') throw httpError('required', 'give the value to match as ?value=', 'value')
  if (value.length > MAX_VALUE_CHARS)
    throw httpError('invalid_input', `?value= is at most ${MAX_VALUE_CHARS} characters`, 'value')
  return { kind: 'exact', property, value }
}

function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT
  if (!/^[1-9][0-9]{0,2}$/.test(text) || Number(text) > MAX_LIMIT)
    throw httpError('invalid_input', `?limit= is a whole number from 1 to ${MAX_LIMIT}`, 'limit')
  return Number(text)
}

/** Opaque to clients; it names the query it was made for, so it cannot page another one. */
function encodeCursor(position: SearchPosition, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ ...position, q: fingerprint })).toString('base64url')
}

function decodeCursor(cursor: string, fingerprint: string): SearchPosition {
  try {
    const { s, v, i, q } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>
    if (
      q === fingerprint &&
      Number.isSafeInteger(s) &&
      (s as number) >= 0 &&
      typeof v === 'string' &&
      typeof i === 'string'
    )
      return { s: s as number, v, i }
  } catch {
    // not base64url JSON: refused below like any other cursor this API did not make
  }
  throw httpError('invalid_input', 'cursor is not a cursor this API returned for this search', 'cursor')
}
