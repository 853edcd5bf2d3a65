/**
 * Person search for the admin API and the console: persons whose distinct_id, or whose value of a
 * searchable property (the plugin's `searchableProperties`), starts with a text; or whose value of
 * one searchable property is exactly a value. Every read is an ordered walk of an index range
 * (`$gte`/`$lt` on the string, never a regex) with a limit, so a page costs about as many
 * documents as it shows, whatever the number of persons.
 *
 * A search walks its sources one after the other: distinct ids first, then each searchable
 * property in its configured order. A person found by several is listed once, at the first: by
 * its smallest matching distinct id, else by the first property that matches. Pages are keyset
 * pages: the cursor is the source and the position in it of the last person listed.
 */
import type { Collection, Db, Filter, IndexDescription } from 'mongodb'
import { PERSON_COLLECTIONS } from './person-store.ts'
import type { DistinctIdDocument, PersonDocument } from './person-store.ts'

/** The most rows one read of a source asks for. */
const MAX_BATCH = 1000
/** Distinct ids shown per person in a result; `more_distinct_ids` says when it has others. */
const SHOWN_DISTINCT_IDS = 5

/** What a search looks for: a prefix in every source, or one property's exact value. */
export type PersonQuery =
  | { readonly kind: 'prefix'; readonly text: string }
  | { readonly kind: 'exact'; readonly property: string; readonly value: string }

/** Where a page ends: the source (0 = distinct ids, else searchable property s-1), its value and the person id. */
export interface SearchPosition {
  readonly s: number
  readonly v: string
  readonly i: string
}

export interface PersonSearchResult {
  id: string
  distinct_ids: string[]
  more_distinct_ids: boolean
  /** The searchable properties the person has (the console's columns). */
  properties: Record<string, unknown>
  /** What matched: `distinct_id` or a searchable property, and its value. */
  matched: { field: string; value: string }
  is_identified: boolean
  created_at: string
}

/** A result with the position it was found at (for the next page's cursor). */
export interface PersonSearchHit {
  readonly result: PersonSearchResult
  readonly position: SearchPosition
}

type ListedPerson = Pick<PersonDocument, 'id' | 'properties' | 'is_identified' | 'created_at' | 'merging'>

/** The index a searchable property is read through: the key order is the order results are listed in. */
export function searchIndexes(properties: readonly string[]): IndexDescription[] {
  return properties.map((key) => ({ key: { project_id: 1, [`properties.${key}`]: 1, id: 1 }, name: `search_${key}` }))
}

export async function ensureSearchIndexes(db: Db, properties: readonly string[]): Promise<void> {
  if (properties.length > 0) await db.collection(PERSON_COLLECTIONS.persons).createIndexes(searchIndexes(properties))
}

/**
 * The string range holding every string that starts with `text`: from the text itself to the text
 * with its last character raised by one. Only a character below the surrogates is raised, so the
 * bound is right in both MongoDB's order (UTF-8 bytes) and the embedded store's (UTF-16 units);
 * characters past the last such one are dropped, which widens the range, and the caller keeps
 * only the strings that do start with the text. Without any such character there is no upper
 * bound: the ordered walk still stops at the page's limit.
 */
export function prefixRange(text: string): { $gte: string; $lt?: string } {
  for (let i = text.length - 1; i >= 0; i--) {
    const code = text.charCodeAt(i)
    if (code < 0xd7ff) return { $gte: text, $lt: text.slice(0, i) + String.fromCharCode(code + 1) }
  }
  return { $gte: text }
}

/** The prefix range of `text`, starting after `after` when given (a page's last value). */
function rangeAfter(text: string, after: string | undefined): Record<string, string> {
  const range = prefixRange(text)
  if (after === undefined) return range
  return range.$lt === undefined ? { $gt: after } : { $gt: after, $lt: range.$lt }
}

/** The filter of one property source: its prefix range or exact value, after a value when given. */
export function propertyFilter(
  projectId: number,
  property: string,
  query: PersonQuery,
  afterValue?: string,
): Filter<PersonDocument> {
  const path = `properties.${property}`
  if (query.kind === 'exact') return { project_id: projectId, [path]: query.value }
  return { project_id: projectId, [path]: rangeAfter(query.text, afterValue) }
}

const PERSON_PROJECTION = { _id: 0, id: 1, properties: 1, is_identified: 1, created_at: 1, merging: 1 }

export class PersonSearch {
  private readonly persons: Collection<PersonDocument>
  private readonly distinctIds: Collection<DistinctIdDocument>

  constructor(
    db: Db,
    /** The searchable properties, in the order a search lists their matches. */
    readonly properties: readonly string[],
  ) {
    this.persons = db.collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    this.distinctIds = db.collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
  }

  /** Up to `count` hits after `after`, in order; more than `count - 1` means there is a next page. */
  async find(projectId: number, query: PersonQuery, count: number, after?: SearchPosition): Promise<PersonSearchHit[]> {
    const sources = query.kind === 'exact' ? 1 : this.properties.length + 1
    const hits: Listed[] = []
    for (let s = after?.s ?? 0; s < sources && hits.length < count; s++) {
      let from = after?.s === s ? after : undefined
      // a source is read in batches until it ends or the page is full; a batch whose persons were
      // listed earlier (found by an earlier source too) makes the next one twice as large, so that
      // walking past many of them costs a few reads, not one per page size
      let want = count - hits.length
      for (;;) {
        const batch =
          query.kind === 'exact'
            ? await this.propertyBatch(projectId, query.property, query, want, from, 0)
            : s === 0
              ? await this.distinctIdBatch(projectId, query.text, want, from)
              : await this.propertyBatch(projectId, this.properties[s - 1]!, query, want, from, s)
        hits.push(...batch.hits)
        if (batch.ended || hits.length >= count) break
        from = batch.last
        want = Math.min(Math.max(count - hits.length, want * 2), MAX_BATCH)
      }
    }
    return this.results(projectId, hits.slice(0, count))
  }

  /** Persons by distinct id: each at its smallest matching id. */
  private async distinctIdBatch(
    projectId: number,
    text: string,
    count: number,
    after: SearchPosition | undefined,
  ): Promise<Batch> {
    const rows = await this.distinctIds
      .find(
        { project_id: projectId, distinct_id: rangeAfter(text, after?.v) },
        { projection: { _id: 0, distinct_id: 1, person_id: 1 } },
      )
      .sort({ distinct_id: 1 })
      .limit(count)
      .toArray()
    const matching = rows.filter((row) => row.distinct_id.startsWith(text))
    const ended = rows.length < count || matching.length < rows.length
    if (matching.length === 0) return { hits: [], ended }
    const personIds = [...new Set(matching.map((row) => row.person_id))]
    const [firstMatch, persons] = await Promise.all([
      this.firstMatchingIds(projectId, personIds, text),
      this.personsById(projectId, personIds),
    ])
    const listed = matching.flatMap((row) => {
      const person = persons.get(row.person_id)
      if (!person || firstMatch.get(row.person_id) !== row.distinct_id) return []
      return [
        {
          person,
          field: 'distinct_id',
          value: row.distinct_id,
          position: { s: 0, v: row.distinct_id, i: row.person_id },
        },
      ]
    })
    const last = matching[matching.length - 1]!
    return { hits: listed, ended, last: { s: 0, v: last.distinct_id, i: last.person_id } }
  }

  /**
   * Persons by one property, ordered by value then person id. After a position, the persons with
   * the same value and a greater id come first (an equality and a range on the id), then those
   * with a greater value: each read is one index range.
   */
  private async propertyBatch(
    projectId: number,
    property: string,
    query: PersonQuery,
    count: number,
    after: SearchPosition | undefined,
    s: number,
  ): Promise<Batch> {
    const path = `properties.${property}`
    const read = (filter: Filter<PersonDocument>, limit: number) =>
      this.persons
        .find(filter, { projection: PERSON_PROJECTION })
        .sort({ [path]: 1, id: 1 })
        .limit(limit)
        .toArray() as Promise<ListedPerson[]>
    const rows: ListedPerson[] = []
    if (after) rows.push(...(await read({ project_id: projectId, [path]: after.v, id: { $gt: after.i } }, count)))
    if (rows.length < count && !(after && query.kind === 'exact'))
      rows.push(...(await read(propertyFilter(projectId, property, query, after?.v), count - rows.length)))
    // a list value is indexed by its elements: such persons are not searched (nor can they be a position)
    const strings = rows.filter((person) => typeof person.properties[property] === 'string')
    const valueOf = (person: ListedPerson) => person.properties[property] as string
    const text = query.kind === 'prefix' ? query.text : undefined
    const past = text === undefined ? -1 : strings.findIndex((person) => !valueOf(person).startsWith(text))
    const matching = past === -1 ? strings : strings.slice(0, past)
    const ended = rows.length < count || past !== -1 || strings.length === 0
    if (matching.length === 0) return { hits: [], ended: true }
    const byDistinctId =
      text === undefined
        ? new Set<string>()
        : await this.withMatchingId(
            projectId,
            matching.map((p) => p.id),
            text,
          )
    const earlier = text === undefined ? [] : this.properties.slice(0, s - 1)
    const listed = matching
      .filter((person) => !person.merging?.committed && !byDistinctId.has(person.id))
      .filter((person) => !earlier.some((key) => startsWith(person.properties[key], text!)))
      .map((person) => ({
        person,
        field: property,
        value: valueOf(person),
        position: { s, v: valueOf(person), i: person.id },
      }))
    const last = matching[matching.length - 1]!
    return { hits: listed, ended, last: { s, v: valueOf(last), i: last.id } }
  }

  /** The smallest distinct id starting with `text` of each of these persons. */
  private async firstMatchingIds(projectId: number, personIds: string[], text: string): Promise<Map<string, string>> {
    const rows = await this.distinctIds
      .find(
        { project_id: projectId, person_id: { $in: personIds }, distinct_id: prefixRange(text) },
        { projection: { _id: 0, distinct_id: 1, person_id: 1 } },
      )
      .toArray()
    const first = new Map<string, string>()
    for (const row of rows) {
      if (!row.distinct_id.startsWith(text)) continue
      const known = first.get(row.person_id)
      if (known === undefined || row.distinct_id < known) first.set(row.person_id, row.distinct_id)
    }
    return first
  }

  /** Which of these persons have a distinct id starting with `text` (they were listed by it). */
  private async withMatchingId(projectId: number, personIds: string[], text: string): Promise<Set<string>> {
    return new Set((await this.firstMatchingIds(projectId, personIds, text)).keys())
  }

  private async personsById(projectId: number, ids: string[]): Promise<Map<string, ListedPerson>> {
    const rows = (await this.persons
      .find({ project_id: projectId, id: { $in: ids } }, { projection: PERSON_PROJECTION })
      .toArray()) as ListedPerson[]
    return new Map(rows.filter((person) => !person.merging?.committed).map((person) => [person.id, person]))
  }

  private async results(projectId: number, listed: Listed[]): Promise<PersonSearchHit[]> {
    const shown = await this.shownDistinctIds(
      projectId,
      listed.map(({ person }) => person.id),
    )
    return listed.map(({ person, field, value, position }) => {
      const ids = shown.get(person.id) ?? []
      const properties: Record<string, unknown> = {}
      for (const key of this.properties)
        if (Object.hasOwn(person.properties, key)) properties[key] = person.properties[key]
      const result: PersonSearchResult = {
        id: person.id,
        distinct_ids: ids.slice(0, SHOWN_DISTINCT_IDS),
        more_distinct_ids: ids.length > SHOWN_DISTINCT_IDS,
        properties,
        matched: { field, value },
        is_identified: person.is_identified,
        created_at: new Date(person.created_at).toISOString(),
      }
      return { result, position }
    })
  }

  /**
   * The first few distinct ids of each person, sorted (one more than shown says there are others).
   * One read for the whole page, unless a person has so many ids that it would be a large read:
   * then each person's are read alone, a few each.
   */
  private async shownDistinctIds(projectId: number, personIds: string[]): Promise<Map<string, string[]>> {
    const byPerson = new Map<string, string[]>(personIds.map((id) => [id, []]))
    if (personIds.length === 0) return byPerson
    const cap = personIds.length * (SHOWN_DISTINCT_IDS + 1) * 4
    const rows = await this.distinctIds
      .find(
        { project_id: projectId, person_id: { $in: personIds } },
        { projection: { _id: 0, distinct_id: 1, person_id: 1 } },
      )
      .limit(cap + 1)
      .toArray()
    if (rows.length <= cap) {
      for (const row of rows) byPerson.get(row.person_id)?.push(row.distinct_id)
      for (const ids of byPerson.values()) ids.sort()
      return byPerson
    }
    await Promise.all(
      personIds.map(async (personId) => {
        const few = await this.distinctIds
          .find({ project_id: projectId, person_id: personId }, { projection: { _id: 0, distinct_id: 1 } })
          .sort({ distinct_id: 1 })
          .limit(SHOWN_DISTINCT_IDS + 1)
          .toArray()
        byPerson.set(
          personId,
          few.map((row) => row.distinct_id),
        )
      }),
    )
    return byPerson
  }
}

interface Listed {
  person: ListedPerson
  field: string
  value: string
  position: SearchPosition
}

interface Batch {
  hits: Listed[]
  /** The source has nothing after this batch. */
  ended: boolean
  /** The last row read (listed or skipped): where the next batch starts. */
  last?: SearchPosition
}

const startsWith = (value: unknown, text: string) => typeof value === 'string' && value.startsWith(text)
