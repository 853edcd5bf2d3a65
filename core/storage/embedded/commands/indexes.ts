import { encode, isPlainObject, type Doc } from '../bson/codec.ts'
import { ID_INDEX, type Collection } from '../engine/collection.ts'
import { parseIndexSpec, sameIndexOptions, sameKey, type IndexSpec } from '../engine/index-spec.ts'
import { formatValue } from '../engine/format.ts'
import { mongoError, notSupported } from '../errors.ts'
import { collectionOf, dbOf, optionalDoc, type CommandHandler } from './context.ts'

function shown(spec: IndexSpec): string {
  return formatValue({ ...spec })
}

/** Whether `spec` already exists (true), is new (false), or conflicts (throws, as mongod). */
function exists(coll: Collection | undefined, spec: IndexSpec): boolean {
  const all = [ID_INDEX, ...(coll?.indexes.map((i) => i.spec) ?? [])]
  const byName = all.find((s) => s.name === spec.name)
  if (byName) {
    if (!sameKey(byName.key, spec.key)) {
      throw mongoError(
        'IndexKeySpecsConflict',
        `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${shown(spec)}, existing index: ${shown(byName)}`,
      )
    }
    if (byName !== ID_INDEX && !sameIndexOptions(byName, spec)) {
      throw mongoError(
        'IndexOptionsConflict',
        `An equivalent index already exists with the same name but different options. Requested index: ${shown(spec)}, existing index: ${shown(byName)}`,
      )
    }
    return true
  }
  const byKey = all.find((s) => sameKey(s.key, spec.key) && sameIndexOptions(s, spec))
  if (byKey) throw mongoError('IndexOptionsConflict', `Index already exists with a different name: ${byKey.name}`)
  return false
}

const COLLMOD_INDEX_OPTIONS = new Set(['name', 'keyPattern', 'expireAfterSeconds', 'hidden'])

export const indexCommands: Record<string, CommandHandler> = {
  /** collMod, for what the embedded server has: an index's expireAfterSeconds or hidden flag. */
  collMod: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'collMod')
    const ignored = new Set([
      'collMod',
      'index',
      '$db',
      'lsid',
      '$clusterTime',
      'writeConcern',
      'comment',
      '$readPreference',
      'txnNumber',
    ])
    const other = Object.keys(cmd.body).find((k) => !ignored.has(k))
    if (other) throw notSupported(`collMod option '${other}'`)
    const coll = ctx.catalog.get(db, name)
    if (!coll) throw mongoError('NamespaceNotFound', `ns does not exist: ${db}.${name}`)
    const change = optionalDoc(cmd.body, 'index')
    if (!change) return { ok: 1 }
    const unknown = Object.keys(change).find((k) => !COLLMOD_INDEX_OPTIONS.has(k))
    if (unknown) throw notSupported(`collMod index option '${unknown}'`)
    // an index being built is not one collMod can change yet (as in MongoDB, which finds only ready ones)
    const index =
      typeof change.name === 'string'
        ? coll.readyIndexes.find((ix) => ix.name === change.name)
        : isPlainObject(change.keyPattern)
          ? coll.readyIndexes.find((ix) => sameKey(ix.spec.key, change.keyPattern as Doc))
          : undefined
    if (!index)
      throw mongoError(
        'IndexNotFound',
        `cannot find index ${formatValue(change.name ?? change.keyPattern)} for ns ${db}.${name}`,
      )
    const spec: IndexSpec = { ...index.spec }
    const reply: Doc = { ok: 1 }
    if (change.expireAfterSeconds !== undefined) {
      if (index.spec.expireAfterSeconds === undefined)
        throw mongoError('InvalidOptions', 'no expireAfterSeconds field to update')
      const ttl = parseIndexSpec({
        key: index.spec.key,
        expireAfterSeconds: change.expireAfterSeconds,
      }).expireAfterSeconds
      reply.expireAfterSeconds_old = index.spec.expireAfterSeconds
      reply.expireAfterSeconds_new = ttl
      spec.expireAfterSeconds = ttl
    }
    if (change.hidden !== undefined) {
      reply.hidden_old = Boolean(index.spec.hidden)
      reply.hidden_new = Boolean(change.hidden)
      if (change.hidden) spec.hidden = true
      else delete spec.hidden
    }
    ctx.catalog.modifyIndex(coll, spec)
    return reply
  },
  createIndexes: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'createIndexes')
    const raw = cmd.body.indexes
    if (!Array.isArray(raw) || raw.length === 0)
      throw mongoError('BadValue', 'Must specify at least one index to create')
    const specs = raw.map(parseIndexSpec)
    const existing = ctx.catalog.get(db, name)
    const before = existing ? existing.indexes.length + 1 : 1
    const fresh = specs.filter(
      (spec, i) => !exists(existing, spec) && !specs.slice(0, i).some((s) => s.name === spec.name),
    )
    // the same index being built already: this caller waits for it too (MongoDB joins the build)
    for (const spec of specs) {
      const building = existing?.index(spec.name)
      if (building?.building) ctx.after.push(ctx.indexBuilds.wait(building))
    }
    const coll = existing ?? ctx.catalog.ensure(db, name)
    if (coll.size === 0) {
      for (const spec of fresh) ctx.catalog.createIndex(coll, spec)
    } else if (fresh.length > 0) {
      const indexes = fresh.map((spec) => ctx.catalog.startIndexBuild(coll, spec))
      ctx.after.push(ctx.indexBuilds.start(coll, indexes))
    }
    return {
      ...(fresh.length === 0 ? { note: 'all indexes already exist' } : {}),
      createdCollectionAutomatically: existing === undefined,
      numIndexesBefore: before,
      numIndexesAfter: coll.indexes.length + 1,
      ok: 1,
    }
  },
  listIndexes: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'listIndexes')
    const coll = ctx.catalog.get(db, name)
    if (!coll) throw mongoError('NamespaceNotFound', `ns does not exist: ${db}.${name}`)
    const specs: Doc[] = [ID_INDEX, ...coll.indexes.map((i) => i.spec)].map((s) => ({ ...s }))
    const batchSize = optionalDoc(cmd.body, 'cursor')?.batchSize
    return ctx.cursors.open(
      `${db}.${name}`,
      specs.map((s) => encode(s) as Uint8Array)[Symbol.iterator](),
      typeof batchSize === 'number' ? batchSize : undefined,
    )
  },
  dropIndexes: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'dropIndexes')
    const coll = ctx.catalog.get(db, name)
    if (!coll) throw mongoError('NamespaceNotFound', `ns not found ${db}.${name}`)
    const was = coll.indexes.length + 1
    const target = cmd.body.index
    if (target === '*') {
      for (const ix of [...coll.indexes]) ctx.catalog.dropIndex(coll, ix.name)
      return { nIndexesWas: was, msg: 'non-_id indexes dropped for collection', ok: 1 }
    }
    const wanted = Array.isArray(target) ? target : [target]
    const names = wanted.map((w) => {
      if (w === '_id_' || (isPlainObject(w) && sameKey({ _id: 1 }, w)))
        throw mongoError('InvalidOptions', 'cannot drop _id index')
      const found =
        typeof w === 'string'
          ? coll.index(w)
          : isPlainObject(w)
            ? coll.indexes.find((ix) => sameKey(ix.spec.key, w))
            : undefined
      if (!found) {
        throw mongoError(
          'IndexNotFound',
          typeof w === 'string' ? `index not found with name [${w}]` : `can't find index with key: ${formatValue(w)}`,
        )
      }
      return found.name
    })
    for (const indexName of names) ctx.catalog.dropIndex(coll, indexName)
    return { nIndexesWas: was, ok: 1 }
  },
}
