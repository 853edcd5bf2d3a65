import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import { indexFields, type IndexField, type IndexSpec } from './index-spec.ts'
import { encodeKeys } from './key-encoding.ts'
import { compileFilter, type Matcher } from './matcher.ts'
import { memoryIndexEntries, type IndexEntries } from './doc-store.ts'
import type { Entry } from './sorted-entries.ts'

/** One key a document contributes to an index, with the values it was made of (for errors). */
export interface IndexKey {
  key: string
  values: unknown[]
}

interface FieldValues {
  values: unknown[]
  fromArray: boolean
  present: boolean
}

function collect(value: unknown, parts: string[], i: number, out: FieldValues): void {
  if (i === parts.length) {
    if (value !== undefined) out.present = true
    if (Array.isArray(value)) {
      out.fromArray = true
      if (value.length === 0) out.values.push(undefined)
      else for (const item of value) out.values.push(item)
    } else {
      out.values.push(value)
    }
    return
  }
  if (Array.isArray(value)) {
    out.fromArray = true
    if (/^\d+$/.test(parts[i])) {
      collect(value[Number(parts[i])], parts, i + 1, out)
      return
    }
    for (const item of value) if (isPlainObject(item)) collect(item[parts[i]], parts, i + 1, out)
    return
  }
  if (isPlainObject(value)) collect(value[parts[i]], parts, i + 1, out)
}

function fieldValues(doc: Doc, parts: string[]): FieldValues {
  const out: FieldValues = { values: [], fromArray: false, present: false }
  collect(doc, parts, 0, out)
  if (out.values.length === 0) out.values.push(undefined)
  return out
}

/**
 * The value of each path when none of them meets an array (the common case, one key per document:
 * what fieldValues would give, without its lists), or undefined when one does.
 */
function singleValues(doc: Doc, paths: string[][]): unknown[] | undefined {
  const values: unknown[] = new Array(paths.length)
  for (let i = 0; i < paths.length; i++) {
    let value: unknown = doc
    for (const part of paths[i]) {
      if (!isPlainObject(value)) {
        if (Array.isArray(value)) return undefined
        value = undefined
        break
      }
      value = value[part]
    }
    if (Array.isArray(value)) return undefined
    values[i] = value
  }
  return values
}

/**
 * An index being built beside other commands (index-builds.ts). Writes keep its entries in step
 * from the moment it is registered; the build scans the documents in natural order, `position` being
 * the last one scanned (an on-disk store resumes from it after a restart). Queries do not use it.
 */
export interface BuildState {
  position: number
  /** A write gave two documents the same key of this unique index: the build fails with this. */
  failure?: Error
}

/** A secondary index: every (key, document id) pair, sorted, plus what makes the index special. */
export class SecondaryIndex {
  readonly fields: IndexField[]
  /** Each field's path, split at its dots. */
  private readonly paths: string[][]
  /** Some document had an array in an indexed field: a key may map to several entries per doc. */
  multikey = false
  /** Set while the index is being built: writes maintain it, queries do not use it. */
  building: BuildState | undefined
  private readonly partial: Matcher | undefined

  constructor(
    readonly spec: IndexSpec,
    private readonly ns: string,
    readonly entries: IndexEntries = memoryIndexEntries(),
  ) {
    this.fields = indexFields(spec)
    this.paths = this.fields.map((f) => f.path.split('.'))
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression) : undefined
  }

  /** The top-level fields whose values make this index's keys (a document reduced to them has the same keys). */
  get topLevelFields(): string[] {
    return this.fields.map((f) => f.path.split('.')[0])
  }

  get name(): string {
    return this.spec.name
  }

  /** Usable to answer queries: a sparse or partial index does not hold every document. */
  get complete(): boolean {
    return !this.spec.sparse && !this.partial && !this.spec.hidden && !this.building
  }

  /** Writes keep its entries: ready, or building and not failed. */
  get maintained(): boolean {
    return !this.building?.failure
  }

  /** The keys `doc` contributes ([] when a sparse or partial index leaves it out). */
  keysOf(doc: Doc): IndexKey[] {
    if (this.partial && !this.partial.test(doc)) return []
    const single = singleValues(doc, this.paths)
    if (single) {
      if (this.spec.sparse && single.every((v) => v === undefined)) return []
      return [{ key: encodeKeys(single), values: single }]
    }
    const perField = this.paths.map((parts) => fieldValues(doc, parts))
    if (this.spec.sparse && perField.every((f) => !f.present)) return []
    const arrays = perField.filter((f) => f.fromArray)
    if (arrays.length > 1) {
      const names = this.fields.filter((_, i) => perField[i].fromArray).map((f) => `[${f.path}]`)
      throw mongoError(
        'CannotIndexParallelArrays',
        `cannot index parallel arrays ${names.slice(0, 2).reverse().join(' ')}`,
      )
    }
    if (perField.every((f) => f.values.length === 1)) {
      const values = perField.map((f) => f.values[0])
      return [{ key: encodeKeys(values), values }]
    }
    let combos: unknown[][] = [[]]
    for (const field of perField) combos = combos.flatMap((combo) => field.values.map((value) => [...combo, value]))
    const seen = new Set<string>()
    const keys: IndexKey[] = []
    for (const values of combos) {
      const key = encodeKeys(values)
      if (!seen.has(key)) keys.push({ key, values })
      seen.add(key)
    }
    return keys
  }

  add(id: string, keys: IndexKey[]): void {
    if (keys.length > 1) this.multikey = true
    for (const k of keys) this.entries.insert(k.key, id)
  }

  /**
   * Adds a new document's keys; for a unique index, the first key another document holds is
   * returned instead, with this call's own entries taken back (nothing changed).
   */
  claim(id: string, keys: IndexKey[]): IndexKey | undefined {
    if (!this.spec.unique) {
      this.add(id, keys)
      return undefined
    }
    for (let i = 0; i < keys.length; i++) {
      if (this.entries.claim(keys[i].key, id)) continue
      this.remove(id, keys.slice(0, i))
      return keys[i]
    }
    if (keys.length > 1) this.multikey = true
    return undefined
  }

  remove(id: string, keys: IndexKey[]): void {
    for (const k of keys) this.entries.delete(k.key, id)
  }

  /** Throws, changing nothing, if the storage cannot hold one of these keys. */
  checkKeys(id: string, keys: IndexKey[]): void {
    for (const k of keys) this.entries.check(k.key, id)
  }

  /** For a unique index: the E11000 error `keys` would cause for document `id`, if any. */
  duplicateError(id: string, keys: IndexKey[]): Error | undefined {
    if (!this.spec.unique) return undefined
    for (const k of keys) {
      if (this.entries.idsWithKey(k.key).some((other) => other !== id)) return this.duplicate(k.values)
    }
    return undefined
  }

  duplicate(values: unknown[]): Error {
    const keyValue: Doc = {}
    this.fields.forEach((f, i) => {
      keyValue[f.path] = values[i] === undefined ? null : values[i]
    })
    const shown = Object.entries(keyValue)
      .map(([k, v]) => `${k}: ${formatValue(v)}`)
      .join(', ')
    return mongoError(
      'DuplicateKey',
      `E11000 duplicate key error collection: ${this.ns} index: ${this.name} dup key: { ${shown} }`,
      {
        keyPattern: this.spec.key,
        keyValue,
      },
    )
  }

  /** Rebuilds from scratch: start, feed every document once, finish (checks uniqueness). */
  startBuild(): IndexBuild {
    const build = new IndexBuild(this)
    this.multikey = false
    return build
  }

  finishBuild(build: IndexBuild): void {
    this.entries.load(build.entries)
  }

  rebuild(docs: Iterable<[string, Doc]>): void {
    const build = this.startBuild()
    for (const [id, doc] of docs) build.feed(id, doc)
    this.finishBuild(build)
  }

  /** The same entries under other options (collMod changes TTL or hidden, never the key). */
  withSpec(spec: IndexSpec): SecondaryIndex {
    const copy = new SecondaryIndex(spec, this.ns, this.entries)
    copy.multikey = this.multikey
    return copy
  }

  rename(ns: string): SecondaryIndex {
    const copy = new SecondaryIndex(this.spec, ns, this.entries)
    copy.multikey = this.multikey
    return copy
  }
}

export class IndexBuild {
  readonly entries: Entry[] = []
  private readonly owners: Map<string, string> | undefined

  constructor(private readonly index: SecondaryIndex) {
    this.owners = index.spec.unique ? new Map() : undefined
  }

  feed(id: string, doc: Doc): void {
    const keys = this.index.keysOf(doc)
    if (keys.length > 1) this.index.multikey = true
    for (const k of keys) {
      if (this.owners) {
        const owner = this.owners.get(k.key)
        if (owner !== undefined && owner !== id) throw this.index.duplicate(k.values)
        this.owners.set(k.key, id)
      }
      this.entries.push({ key: k.key, id })
    }
  }
}
