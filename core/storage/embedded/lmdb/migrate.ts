import { mkdirSync, renameSync } from 'node:fs'
import path from 'node:path'
import { decode, encode } from '../bson/codec.ts'
import { Catalog } from '../engine/catalog.ts'
import { DataDir } from '../persistence/data-dir.ts'
import { SILENT } from '../persistence/journal.ts'
import { recover } from '../persistence/recovery.ts'
import type { LmdbEnvironment } from './environment.ts'

const MIGRATED = Buffer.from('migrated-from-log', 'latin1')
const BATCH = 5000
/** Where the snapshot and log files of a migrated folder are kept (nothing is deleted). */
export const LEGACY_FOLDER = 'pre-lmdb'

export interface MigrationResult {
  collections: number
  documents: number
  movedTo: string
}

function moveLegacyFiles(legacy: DataDir): string {
  const target = path.join(legacy.dir, LEGACY_FOLDER)
  mkdirSync(target, { recursive: true, mode: 0o700 })
  for (const gen of legacy.snapshots())
    renameSync(legacy.snapshotPath(gen), path.join(target, path.basename(legacy.snapshotPath(gen))))
  for (const gen of legacy.wals())
    renameSync(legacy.walPath(gen), path.join(target, path.basename(legacy.walPath(gen))))
  legacy.syncDir()
  return target
}

/**
 * A data folder written by the in-memory engine (snapshot-*.bin, wal-*.log) is read once with the
 * existing recovery code and copied into lmdb; the old files then move to pre-lmdb/. A migration
 * cut short (no "migrated" mark in lmdb) is started over from the old files, which are still in
 * place, at the next start.
 */
export async function migrateLegacyFolder(
  dataDir: string,
  env: LmdbEnvironment,
  catalog: Catalog,
): Promise<MigrationResult | undefined> {
  const legacy = new DataDir(dataDir)
  if (legacy.snapshots().length === 0 && legacy.wals().length === 0) return undefined
  if (env.meta.getBinary(MIGRATED)) return { collections: 0, documents: 0, movedTo: moveLegacyFiles(legacy) }
  env.transact(() => {
    for (const db of catalog.databases()) catalog.dropDatabase(db)
  })
  const memory = new Catalog(SILENT)
  recover(memory, legacy)
  let documents = 0
  let collections = 0
  for (const source of memory.all()) {
    collections += 1
    const target = env.transact(() => {
      const coll = catalog.create(source.db, source.name, source.options, source.uuid)
      for (const ix of source.indexes) catalog.createIndex(coll, ix.spec)
      return coll
    })
    let batch: Array<[string, Buffer]> = []
    const flush = () => {
      env.transact(() => {
        for (const [, raw] of batch) target.insert(raw, decode(raw))
      })
      documents += batch.length
      batch = []
    }
    for (const entry of source.entries()) {
      batch.push(entry)
      if (batch.length >= BATCH) flush()
    }
    flush()
  }
  env.transact(() => env.meta.putSync(MIGRATED, encode({ at: new Date(), collections, documents })))
  await env.sync()
  return { collections, documents, movedTo: moveLegacyFiles(legacy) }
}
