import type { Doc } from '../bson/codec.ts'
import { encode } from '../bson/codec.ts'
import type { Catalog } from '../engine/catalog.ts'
import { ID_INDEX } from '../engine/collection.ts'
import { compileFilter } from '../engine/matcher.ts'
import { mongoError, notSupported } from '../errors.ts'
import { collectionOf, dbOf, optionalDoc, type CommandHandler } from './context.ts'

const UNSUPPORTED_CREATE_OPTIONS = [
  'capped',
  'validator',
  'timeseries',
  'clusteredIndex',
  'viewOn',
  'pipeline',
  'collation',
  'encryptedFields',
  'storageEngine',
]

function filtered<T extends Doc>(items: T[], filter: Doc | undefined): T[] {
  if (!filter) return items
  const matcher = compileFilter(filter)
  return items.filter((item) => matcher.test(item))
}

function* encoded(docs: Doc[]): Generator<Uint8Array> {
  for (const doc of docs) yield encode(doc)
}

function splitNamespace(ns: unknown, field: string): [string, string] {
  if (typeof ns !== 'string' || !ns.includes('.'))
    throw mongoError('InvalidNamespace', `Invalid ${field} namespace: ${String(ns)}`)
  const dot = ns.indexOf('.')
  return [ns.slice(0, dot), ns.slice(dot + 1)]
}

/** A collection's sizes, as the collStats command and the $collStats stage's storageStats give them. */
export function storageStats(catalog: Catalog, db: string, name: string): Doc {
  const coll = catalog.get(db, name)
  const count = coll?.size ?? 0
  const size = coll?.dataBytes ?? 0
  return {
    count,
    size,
    avgObjSize: count ? Math.round(size / count) : 0,
    storageSize: size,
    nindexes: coll ? coll.indexes.length + 1 : 0,
    indexSizes: Object.fromEntries([ID_INDEX, ...(coll?.indexes.map((i) => i.spec) ?? [])].map((s) => [s.name, 0])),
    totalIndexSize: 0,
  }
}

export const namespaceCommands: Record<string, CommandHandler> = {
  create: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'create')
    for (const option of UNSUPPORTED_CREATE_OPTIONS) {
      if (cmd.body[option] !== undefined && cmd.body[option] !== false)
        throw notSupported(`the create option '${option}'`)
    }
    ctx.catalog.create(db, name, {})
    return { ok: 1 }
  },
  drop: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'drop')
    const dropped = ctx.catalog.drop(db, name)
    return { nIndexesWas: dropped ? dropped.indexes.length + 1 : 0, ns: `${db}.${name}`, ok: 1 }
  },
  dropDatabase: (cmd, ctx) => {
    const db = dbOf(cmd)
    ctx.catalog.dropDatabase(db)
    return { dropped: db, ok: 1 }
  },
  renameCollection: (cmd, ctx) => {
    const [fromDb, fromName] = splitNamespace(cmd.body.renameCollection, 'source')
    const [toDb, toName] = splitNamespace(cmd.body.to, 'target')
    ctx.catalog.rename(fromDb, fromName, toDb, toName, cmd.body.dropTarget === true)
    return { ok: 1 }
  },
  listCollections: (cmd, ctx) => {
    const db = dbOf(cmd)
    let list: Doc[] = ctx.catalog.collections(db).map((c) => ({
      name: c.name,
      type: 'collection',
      options: c.options,
      info: { readOnly: false, uuid: c.uuid },
      idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
    }))
    list = filtered(list, optionalDoc(cmd.body, 'filter'))
    if (cmd.body.nameOnly === true) list = list.map((c) => ({ name: c.name, type: c.type }))
    const batchSize = optionalDoc(cmd.body, 'cursor')?.batchSize
    return ctx.cursors.open(
      `${db}.$cmd.listCollections`,
      encoded(list),
      typeof batchSize === 'number' ? batchSize : undefined,
    )
  },
  listDatabases: (cmd, ctx) => {
    let databases: Doc[] = ctx.catalog.databases().map((name) => {
      const size = ctx.catalog.collections(name).reduce((sum, c) => sum + c.dataBytes, 0)
      return { name, sizeOnDisk: size, empty: size === 0 }
    })
    databases = filtered(databases, optionalDoc(cmd.body, 'filter'))
    const totalSize = databases.reduce((sum, d) => sum + (d.sizeOnDisk as number), 0)
    if (cmd.body.nameOnly === true) return { databases: databases.map((d) => ({ name: d.name })), ok: 1 }
    return { databases, totalSize, totalSizeMb: Math.round(totalSize / 1048576), ok: 1 }
  },
  collStats: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'collStats')
    return { ns: `${db}.${name}`, ...storageStats(ctx.catalog, db, name), ok: 1 }
  },
  dbStats: (cmd, ctx) => {
    const db = dbOf(cmd)
    const colls = ctx.catalog.collections(db)
    const objects = colls.reduce((sum, c) => sum + c.size, 0)
    const dataSize = colls.reduce((sum, c) => sum + c.dataBytes, 0)
    return {
      db,
      collections: colls.length,
      views: 0,
      objects,
      dataSize,
      storageSize: dataSize,
      indexes: colls.reduce((sum, c) => sum + c.indexes.length + 1, 0),
      ok: 1,
    }
  },
  fsync: async (_cmd, ctx) => {
    await ctx.syncLog()
    return { numFiles: 1, ok: 1 }
  },
  compact: async (cmd, ctx) => {
    collectionOf(cmd, 'compact')
    await ctx.compactLog()
    return { bytesFreed: 0, ok: 1 }
  },
}
