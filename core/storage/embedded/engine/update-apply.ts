import { ObjectId, Timestamp } from 'bson'
import { update as mingoUpdate, Aggregator } from 'mingo'
import * as updateOperators from 'mingo/operators/update'
import { decode, encode, type Doc } from '../bson/codec.ts'
import { applyNumericHints, numericHints, type NumericHints } from '../bson/numeric-types.ts'
import { assemble, elementsOf, objectIdElement } from '../bson/raw.ts'
import { mongoError, notSupported, toMongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import { encodeKey } from './key-encoding.ts'
import { MINGO_OPTIONS } from './matcher.ts'
import { checkAction, checkArrayUpdate } from './update-checks.ts'
import { mergeHints } from './update-hints.ts'
import { dollarPrefixedTopLevelError, type ParsedUpdate, type UpdateAction } from './update-parse.ts'
import { upsertSeed } from './upsert-seed.ts'

/** An update statement ready to apply: parsed `u`, its raw bytes (for exact types), the filter. */
export interface UpdateInput {
  parsed: ParsedUpdate
  rawUpdate?: Uint8Array
  filter: Doc
}

export interface UpdatedDoc {
  doc: Doc
  raw: Buffer
}

const POSITIONAL_MESSAGES = [/must include the array field for '\.\$'/, /positional operator found no match/]

type OperatorFn = (expr: Doc, arrayFilters?: Doc[]) => (doc: Doc) => string[]
const OPERATORS = updateOperators as unknown as Record<string, OperatorFn>

/**
 * mingo's update() rebuilds its whole operator table per call; its operators called
 * directly share one. The positional `$` needs the filter, which only update() passes on.
 */
function runMingo(
  doc: Doc,
  actions: Array<[string, string, unknown]>,
  input: UpdateInput,
  positional: boolean,
  arrayFilters: Doc[],
): void {
  if (actions.length === 0) return
  try {
    if (positional) {
      const modifier: Record<string, Doc> = {}
      for (const [op, path, value] of actions) (modifier[op] ??= {})[path] = value
      mingoUpdate(doc, modifier, arrayFilters, input.filter, { cloneMode: 'copy', queryOptions: MINGO_OPTIONS })
    } else {
      for (const [op, path, value] of actions) OPERATORS[op]({ [path]: value }, arrayFilters)(doc)
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (POSITIONAL_MESSAGES.some((p) => p.test(message))) {
      throw mongoError('BadValue', 'The positional operator did not find the match needed from the query.')
    }
    throw toMongoError(error)
  }
}

/** MongoDB (5.0+) applies update paths in lexicographic order, numeric names numerically. */
function comparePaths(a: UpdateAction, b: UpdateAction): number {
  for (let i = 0; i < Math.min(a.parts.length, b.parts.length); i++) {
    const [x, y] = [a.parts[i], b.parts[i]]
    if (x === y) continue
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y)
    return x < y ? -1 : 1
  }
  return a.parts.length - b.parts.length
}

/** Applies operator actions to `doc` in place. `_id` and top-level `$` names are handled here. */
function applyOperators(
  doc: Doc,
  unsorted: UpdateAction[],
  input: UpdateInput,
  inserting: boolean,
  positional: boolean,
  arrayFilters: Doc[],
): void {
  const actions = [...unsorted].sort(comparePaths)
  const modifier: Array<[string, string, unknown]> = []
  const idBefore = encodeKey(doc._id)
  for (const action of actions) {
    const { op, parts, path } = action
    if (op === '$setOnInsert' && !inserting) continue
    // $currentDate is a $set of the server's clock (mingo's would reuse one cached instant).
    const effectiveOp = op === '$setOnInsert' || op === '$currentDate' ? '$set' : op
    const value = op === '$currentDate' ? currentDate(action.value) : action.value
    if (parts[0] === '_id') {
      if (inserting && effectiveOp === '$set' && parts.length === 1) {
        doc._id = value
        continue
      }
      if (effectiveOp === '$set' && parts.length === 1 && encodeKey(value) === idBefore) continue
      throw mongoError(
        'ImmutableField',
        `Performing an update on the path '${path}' would modify the immutable field '_id'`,
      )
    }
    if (parts[0].startsWith('$')) {
      if (op === '$unset' && parts.length === 1) {
        delete doc[parts[0]]
        continue
      }
      if (!inserting && (parts.length === 1 || doc[parts[0]] === undefined)) throw dollarPrefixedTopLevelError(parts[0])
      if (inserting && effectiveOp === '$set' && parts.length === 1) {
        doc[parts[0]] = value
        continue
      }
      throw notSupported(`updating inside the top-level field '${parts[0]}'`)
    }
    if (action.dynamic) checkArrayUpdate(doc, action)
    else checkAction(doc, { ...action, op: effectiveOp })
    modifier.push([effectiveOp, path, value])
  }
  runMingo(doc, modifier, input, positional, arrayFilters)
}

function currentDate(spec: unknown): Date | Timestamp {
  const now = new Date()
  if (typeof spec === 'object' && spec !== null && (spec as Doc).$type === 'timestamp') {
    return new Timestamp({ t: Math.floor(now.getTime() / 1000), i: 1 })
  }
  return now
}

function idFirst(doc: Doc): Doc {
  if (Object.keys(doc)[0] === '_id') return doc
  const { _id, ...rest } = doc
  return { _id, ...rest }
}

function finish(doc: Doc, hints: NumericHints): UpdatedDoc {
  const ordered = idFirst(doc)
  // Wrapping in place leaves Long/Double objects in `doc`; index keys encode them by value.
  if (hints.size > 0) applyNumericHints(ordered, hints)
  return { doc: ordered, raw: encode(ordered) }
}

function operandHints(input: UpdateInput): NumericHints {
  return input.rawUpdate ? numericHints(input.rawUpdate) : new Map()
}

/** The stored form of a replacement document: its own bytes, `_id` first (taken from `id`). */
function replacementRaw(
  replacement: Doc,
  raw: Uint8Array | undefined,
  id: unknown,
  idRaw: Uint8Array | undefined,
): Buffer {
  for (const field of Object.keys(replacement)) {
    if (field.startsWith('$')) throw dollarPrefixedTopLevelError(field)
  }
  if (!raw) return finish({ ...replacement, _id: id }, new Map()).raw
  const elements = elementsOf(raw)
  const own = elements.find((e) => e.name === '_id')
  const rest = elements.filter((e) => e.name !== '_id').map((e) => raw.subarray(e.start, e.end))
  const idElement = own ? raw.subarray(own.start, own.end) : (idRaw ?? encodeIdElement(id))
  return assemble([idElement, ...rest])
}

function encodeIdElement(id: unknown): Uint8Array {
  if (id instanceof ObjectId) return objectIdElement(id.id)
  const raw = encode({ _id: id })
  const [element] = elementsOf(raw)
  return raw.subarray(element.start, element.end)
}

function checkIdUnchanged(before: Doc, after: Doc): void {
  if (encodeKey(before._id) !== encodeKey(after._id)) {
    throw mongoError(
      'ImmutableField',
      `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(after._id)}`,
    )
  }
}

function runPipeline(doc: Doc, stages: Doc[]): Doc {
  try {
    const [out] = new Aggregator(stages, MINGO_OPTIONS).run([doc]) as Doc[]
    if (!out || typeof out !== 'object') throw mongoError('BadValue', 'The update pipeline did not produce a document')
    return out
  } catch (error) {
    throw toMongoError(error)
  }
}

/** The new version of an existing document. */
export function applyUpdate(before: Doc, beforeRaw: Buffer, input: UpdateInput): UpdatedDoc {
  const { parsed } = input
  if (parsed.kind === 'replacement') {
    const replacementId = parsed.doc._id
    if (replacementId !== undefined && encodeKey(replacementId) !== encodeKey(before._id)) {
      throw mongoError(
        'ImmutableField',
        `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(replacementId)}`,
      )
    }
    const [idElement] = elementsOf(beforeRaw)
    const raw = replacementRaw(
      parsed.doc,
      input.rawUpdate,
      before._id,
      beforeRaw.subarray(idElement.start, idElement.end),
    )
    return { doc: decode(raw), raw }
  }
  const work = decode(beforeRaw)
  const oldHints = numericHints(beforeRaw)
  if (parsed.kind === 'pipeline') {
    const out = runPipeline(work, parsed.stages)
    checkIdUnchanged(before, out)
    return finish(out, mergeHints(before, out, oldHints, new Map(), [], false))
  }
  applyOperators(work, parsed.actions, input, false, parsed.positional, parsed.arrayFilters)
  checkIdUnchanged(before, work)
  return finish(work, mergeHints(before, work, oldHints, operandHints(input), parsed.actions, false))
}

/** The document an upsert inserts when nothing matched. */
export function buildUpsert(input: UpdateInput): UpdatedDoc {
  const { parsed } = input
  const seed = upsertSeed(input.filter)
  if (parsed.kind === 'replacement') {
    const id = parsed.doc._id ?? seed._id ?? new ObjectId()
    const raw = replacementRaw(parsed.doc, input.rawUpdate, id, undefined)
    return { doc: decode(raw), raw }
  }
  let doc: Doc
  if (parsed.kind === 'pipeline') {
    doc = runPipeline(seed, parsed.stages)
  } else {
    if (parsed.positional)
      throw mongoError('BadValue', 'The positional operator did not find the match needed from the query.')
    doc = seed
    applyOperators(doc, parsed.actions, input, true, false, parsed.arrayFilters)
  }
  if (doc._id === undefined) doc._id = new ObjectId()
  const hints =
    parsed.kind === 'operators' ? mergeHints({}, doc, new Map(), operandHints(input), parsed.actions, true) : new Map()
  return finish(doc, hints)
}
