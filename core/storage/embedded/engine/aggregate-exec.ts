import { Aggregator } from 'mingo'
import { decode, encode, isPlainObject, type Doc } from '../bson/codec.ts'
import { toMongoError } from '../errors.ts'
import type { Catalog } from './catalog.ts'
import type { Collection } from './collection.ts'
import { matching, type Output } from './find-exec.ts'
import { mapped } from './iterators.ts'
import { compileFilter, MINGO_OPTIONS } from './matcher.ts'
import { parseSort, plan, type SortSpec } from './planner.ts'
import { validatePipeline } from './pipeline-validate.ts'

export interface AggregateRequest {
  db: string
  /** undefined for a collectionless aggregate ({aggregate: 1}). */
  collection?: string
  pipeline: unknown
  hint?: unknown
  variables?: Doc
  /** The documents the pipeline starts from instead of the collection's (a $collStats stage's). */
  source?: Doc[]
}

const stageName = (stage: Doc | undefined) => (stage ? Object.keys(stage)[0] : undefined)

/** The driver's countDocuments: [$match, ($skip), ($limit), {$group: {_id: 1, n: {$sum: 1}}}]. */
function countShape(rest: Doc[]): { skip: number; limit: number; group: Doc } | undefined {
  let skip = 0
  let limit = 0
  let i = 0
  if (stageName(rest[i]) === '$skip' && typeof rest[i].$skip === 'number') skip = rest[i++].$skip as number
  if (stageName(rest[i]) === '$limit' && typeof rest[i].$limit === 'number') limit = rest[i++].$limit as number
  const group = rest[i]?.$group
  if (i !== rest.length - 1 || !isPlainObject(group)) return undefined
  const fields = Object.entries(group)
  if (fields.length !== 2 || !(typeof group._id === 'number' || group._id === null)) return undefined
  const counter = fields.find(([k]) => k !== '_id')
  if (!counter || !isPlainObject(counter[1]) || counter[1].$sum !== 1) return undefined
  return { skip, limit, group }
}

/** Runs an aggregation; a leading $match (and $sort) is answered with an index when possible. */
export function runAggregate(catalog: Catalog, req: AggregateRequest): Iterator<Output> {
  const pipeline = validatePipeline(req.pipeline, req.collection === undefined)
  const coll = req.collection === undefined ? undefined : catalog.get(req.db, req.collection)
  let rest = pipeline
  let filter: Doc = {}
  if (stageName(rest[0]) === '$match' && isPlainObject(rest[0].$match)) {
    filter = rest[0].$match
    rest = rest.slice(1)
  }
  let sort: SortSpec = []
  if (stageName(rest[0]) === '$sort') sort = parseSort(rest[0].$sort)
  const matcher = compileFilter(filter)
  const options = {
    ...MINGO_OPTIONS,
    variables: req.variables,
    collectionResolver: (name: string) => [...(catalog.get(req.db, name)?.decodedDocs() ?? [])].map(([, doc]) => doc),
  }
  let source: Iterable<Doc> = []
  if (req.source) {
    source = req.source
    rest = pipeline
  } else if (req.collection === undefined) {
    source = [{}]
  } else if (coll) {
    const p = plan(coll, filter, sort, req.hint)
    if (sort.length > 0 && p.ordered) rest = rest.slice(1)
    const count = countShape(rest)
    if (count && (p.exact || matcher.empty)) return countOnly(coll, p.ids(), count)
    if (rest.length === 0) return mapped(matching(coll, p, matcher), (c) => c.raw)
    source = mapped(matching(coll, p, matcher), (c) => c.doc ?? decode(c.raw))
  }
  if (req.collection !== undefined && !coll && !req.source) return [][Symbol.iterator]()
  try {
    const stream = new Aggregator(rest, options).stream(source)
    return {
      next(): IteratorResult<Output> {
        try {
          const item = stream.next()
          return item.done ? { done: true, value: undefined } : { done: false, value: encode(item.value as Doc) }
        } catch (error) {
          throw toMongoError(error)
        }
      },
    }
  } catch (error) {
    throw toMongoError(error)
  }
}

function countOnly(
  coll: Collection,
  ids: Iterable<string>,
  count: { skip: number; limit: number; group: Doc },
): Iterator<Output> {
  let n = 0
  for (const id of ids) if (coll.has(id)) n += 1
  n = Math.max(0, n - count.skip)
  if (count.limit > 0) n = Math.min(n, count.limit)
  if (n === 0) return [][Symbol.iterator]()
  const field = Object.keys(count.group).find((k) => k !== '_id') as string
  return [encode({ _id: count.group._id, [field]: n })][Symbol.iterator]()
}
