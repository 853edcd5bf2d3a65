import type { Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import type { Collection } from './collection.ts'
import { sameKey } from './index-spec.ts'
import type { Entry } from './sorted-entries.ts'
import { encodeKey, KEY_MAX, markerOf } from './key-encoding.ts'
import { distinct, Step } from './iterators.ts'
import { analyzeFilter, type FieldPredicate } from './predicates.ts'
import type { SecondaryIndex } from './secondary-index.ts'

/** How a query will find its candidate documents. */
export interface Plan {
  /** Encoded ids of the candidates, without duplicates, in `ordered` order when that is true. */
  ids(): Iterable<string>
  /** The candidates come in the requested sort order (no sort needed). */
  ordered: boolean
  /** Every candidate matches the filter: no need to decode and re-check. */
  exact: boolean
  /** For explain and tests: 'COLLSCAN', 'IDHACK' or 'IXSCAN <name>'. */
  stage: string
}

export type SortSpec = Array<[string, 1 | -1]>

const MAX_PREFIXES = 1000

export function parseSort(sort: unknown): SortSpec {
  if (sort === undefined || sort === null) return []
  if (typeof sort !== 'object' || Array.isArray(sort))
    throw mongoError('TypeMismatch', 'Expected field sort to be of type object')
  return Object.entries(sort as Doc).map(([field, dir]) => {
    if (dir === 1 || dir === -1) return [field, dir]
    if (typeof dir === 'object' && dir !== null && '$meta' in dir)
      throw mongoError('NotImplemented', `$meta sort is not supported by the embedded MongoDB-compatible server`)
    throw mongoError('BadValue', `$sort key ordering must be 1 (for ascending) or -1 (for descending)`)
  })
}

function rangeFor(prefix: string, p: FieldPredicate): [string, string] {
  const typeOf = (v: unknown) => markerOf(encodeKey(v))
  const marker = typeOf((p.lower ?? p.upper)?.value)
  const lo = p.lower ? prefix + encodeKey(p.lower.value) : prefix + marker
  const hi = p.upper ? prefix + encodeKey(p.upper.value) + KEY_MAX : prefix + marker + KEY_MAX
  return [lo, hi]
}

interface Candidate {
  index: SecondaryIndex
  ranges: Array<[string, string]>
  /** Set when every field of the index has an equality: the ranges are these whole keys. */
  keys?: string[]
  score: number
  ordered: boolean
  descending: boolean
  exact: boolean
}

function considerIndex(
  index: SecondaryIndex,
  fields: Map<string, FieldPredicate>,
  simple: boolean,
  sort: SortSpec,
): Candidate | undefined {
  let prefixes = ['']
  let used = 0
  let ranges: Array<[string, string]> | undefined
  for (const field of index.fields) {
    const p = fields.get(field.path)
    if (!p) break
    if (p.values) {
      const next: string[] = []
      for (const prefix of prefixes) for (const v of p.values) next.push(prefix + encodeKey(v))
      if (next.length > MAX_PREFIXES) break
      prefixes = next
      used += 1
      continue
    }
    ranges = prefixes.map((prefix) => rangeFor(prefix, p))
    used += 1
    break
  }
  const eqCount = ranges ? used - 1 : used
  ranges ??= prefixes.map((prefix) => [prefix, prefix + KEY_MAX])
  // The remaining index fields give the order within one prefix: usable for the sort if they
  // start with the sort fields, all in the index's direction or all reversed.
  let ordered = false
  let descending = false
  if (sort.length > 0 && prefixes.length === 1 && !index.multikey) {
    const rest = index.fields.slice(eqCount)
    const sortRest = sort.filter(
      ([path]) =>
        !(fields.get(path)?.values?.length === 1 && index.fields.slice(0, eqCount).some((f) => f.path === path)),
    )
    if (sortRest.length > 0 && sortRest.length <= rest.length) {
      // Entries are stored in ascending key order whatever the declared direction.
      const flips = sortRest.map(([path, dir], i) => (rest[i].path === path ? dir : 0))
      if (flips.every((f) => f === 1)) ordered = true
      else if (flips.every((f) => f === -1)) ordered = descending = true
    } else if (sortRest.length === 0) ordered = true
  }
  if (used === 0 && !ordered) return undefined
  const coversFilter = simple && used === fields.size && eqCount === used
  const unique = index.spec.unique && eqCount === index.fields.length
  const score = (unique ? 1000 : 0) + eqCount * 10 + (used > eqCount ? 5 : 0) + (ordered ? 3 : 0)
  const keys = !used || used < index.fields.length || eqCount < used ? undefined : prefixes
  return { index, ranges, keys, score, ordered, descending, exact: coversFilter && !hasNumericPart(index) }
}

function hasNumericPart(index: SecondaryIndex): boolean {
  return index.fields.some((f) => /(^|\.)\d+(\.|$)/.test(f.path))
}

function resolveHint(coll: Collection, hint: unknown): SecondaryIndex | 'natural' | 'id' | undefined {
  if (hint === undefined || hint === null) return undefined
  if (typeof hint === 'string') {
    if (hint === '_id_') return 'id'
    const byName = coll.index(hint)
    if (byName && !byName.building) return byName
  } else if (typeof hint === 'object') {
    const key = hint as Doc
    if ('$natural' in key) return 'natural'
    if (sameKey({ _id: 1 }, key)) return 'id'
    const byKey = coll.readyIndexes.find((ix) => sameKey(ix.spec.key, key))
    if (byKey) return byKey
  }
  throw mongoError(
    'BadValue',
    'error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index',
  )
}

function collectionScan(coll: Collection, sort: SortSpec, reverse: boolean): Plan {
  const natural = sort.length === 1 && sort[0][0] === '$natural'
  return {
    ids: () => coll.ids(reverse || (natural && sort[0][1] === -1)),
    ordered: sort.length === 0 || natural,
    exact: false,
    stage: 'COLLSCAN',
  }
}

/** Chooses how to find the candidates for `filter` (and, if possible, in `sort` order). */
export function plan(coll: Collection, filter: Doc, sort: SortSpec, hint?: unknown): Plan {
  const forced = resolveHint(coll, hint)
  if (forced === 'natural') return collectionScan(coll, sort, false)
  const { fields, simple } = analyzeFilter(filter)
  const idPredicate = fields.get('_id')
  const idValues = forced === undefined || forced === 'id' ? idPredicate?.values : undefined
  if (idValues) {
    const keys = idValues.map(encodeKey)
    return {
      ids: () => distinct(keys.filter((k) => coll.has(k))),
      ordered: sort.length === 0 || keys.length <= 1,
      exact: simple && fields.size === 1,
      stage: 'IDHACK',
    }
  }
  if (forced === 'id') return collectionScan(coll, sort, false)
  const indexes = forced === undefined ? coll.indexes.filter((ix) => ix.complete) : [forced]
  let best: Candidate | undefined
  for (const index of indexes) {
    const candidate = considerIndex(index, fields, simple, sort)
    if (candidate && (!best || candidate.score > best.score)) best = candidate
  }
  if (!best) return collectionScan(coll, sort, false)
  const chosen = best
  const keys = chosen.keys
  if (keys && chosen.index.spec.unique && (keys.length <= 1 || !chosen.ordered)) {
    return {
      ids: () => new PointLookups(chosen.index, keys),
      ordered: chosen.ordered || sort.length === 0,
      exact: chosen.exact,
      stage: `IXSCAN ${chosen.index.name}`,
    }
  }
  const ranges = chosen.descending ? [...chosen.ranges].reverse() : chosen.ranges
  return {
    ids: () => distinct(new RangeWalk(chosen.index, ranges, chosen.descending)),
    ordered: chosen.ordered || sort.length === 0,
    exact: chosen.exact,
    stage: `IXSCAN ${chosen.index.name}`,
  }
}

/**
 * Equality on every field of a unique index (the person and distinct_id lookups): each key is one
 * exact lookup instead of a range walk. Each key's id is looked up when the walk reaches it, so a
 * cursor reading in batches sees writes made between batches as the range walk did. Only used
 * where the order of the candidates does not matter (one key, or a sort done afterwards). An
 * iterator object, not a generator (iterators.ts says why).
 */
class PointLookups extends Step<string> {
  private readonly keys: string[]
  private nextKey = 0
  private readonly found: string[] = []
  private nextFound = 0
  private readonly seen: Set<string> | undefined

  constructor(
    private readonly index: SecondaryIndex,
    keys: string[],
  ) {
    super()
    this.keys = keys.length > 1 ? [...new Set(keys)] : keys
    this.seen = index.multikey ? new Set() : undefined
  }

  next(): IteratorResult<string> {
    for (;;) {
      while (this.nextFound < this.found.length) {
        const id = this.found[this.nextFound++]
        if (this.seen?.has(id)) continue
        this.seen?.add(id)
        return { done: false, value: id }
      }
      if (this.nextKey >= this.keys.length) return { done: true, value: undefined }
      this.found.length = 0
      this.nextFound = 0
      this.index.entries.collectKey(this.keys[this.nextKey++], this.found)
    }
  }
}

/** The ids of an index's entries in `ranges`, one range after the other (an iterator object, see iterators.ts). */
class RangeWalk extends Step<string> {
  private nextRange = 0
  private current: Iterator<Entry> | undefined

  constructor(
    private readonly index: SecondaryIndex,
    private readonly ranges: Array<[string, string]>,
    private readonly descending: boolean,
  ) {
    super()
  }

  next(): IteratorResult<string> {
    for (;;) {
      if (!this.current) {
        if (this.nextRange >= this.ranges.length) return { done: true, value: undefined }
        const [lo, hi] = this.ranges[this.nextRange++]
        this.current = this.index.entries.range(lo, hi, this.descending)[Symbol.iterator]()
      }
      const entry = this.current.next()
      if (!entry.done) return { done: false, value: entry.value.id }
      this.current = undefined
    }
  }

  return(): IteratorResult<string> {
    this.current?.return?.()
    this.current = undefined
    this.nextRange = this.ranges.length
    return { done: true, value: undefined }
  }
}
