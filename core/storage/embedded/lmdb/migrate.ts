import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs'
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

interface LegacyFile {
  name: string
  bytes: number
  /** A later file of the same name and size is still told apart. */
  modified: number
}

export interface MigrationResult {
  collections: number
  documents: number
  movedTo: string
}

/** The in-memory engine's files in the folder, with their sizes. */
function legacyFiles(legacy: DataDir): LegacyFile[] {
  return [...legacy.snapshots().map((g) => legacy.snapshotPath(g)), ...legacy.wals().map((g) => legacy.walPath(g))].map(
    (file) => {
      const stat = statSync(file)
      return { name: path.basename(file), bytes: stat.size, modified: stat.mtimeMs }
    },
  )
}

function moveLegacyFiles(legacy: DataDir): string {
  const target = path.join(legacy.dir, LEGACY_FOLDER)
  mkdirSync(target, { recursive: true, mode: 0o700 })
  for (const { name } of legacyFiles(legacy)) {
    // rename would replace a file of that name silently: the kept copy must never be lost
    if (existsSync(path.join(target, name)))
      throw new Error(`${path.join(target, name)} already exists: move it away before starting the lmdb engine`)
    renameSync(path.join(legacy.dir, name), path.join(target, name))
  }
  legacy.syncDir()
  return target
}

/**
 * Files of the in-memory engine beside an lmdb folder that was already migrated: the ones the
 * migration copied (a start cut short before it moved them) only need moving; any other was
 * written by the in-memory engine afterwards (EMBEDDED_MONGO_ENGINE=memory on the same folder),
 * and copying or moving it over the migrated data would lose one or the other.
 */
function checkAlreadyMigrated(legacy: DataDir, mark: { files?: LegacyFile[] }): void {
  const key = (f: LegacyFile) => `${f.name}:${f.bytes}:${f.modified}`
  const copied = new Set((mark.files ?? []).map(key))
  const newer = legacyFiles(legacy).filter((f) => !copied.has(key(f)))
  if (newer.length > 0)
    throw new Error(
      `${legacy.dir} holds lmdb data and files the in-memory engine wrote after the folder was copied into lmdb (${newer.map((f) => f.name).join(', ')}): start with EMBEDDED_MONGO_ENGINE=memory to keep using them, or move them out of the folder to start on lmdb`,
    )
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
  const mark = env.meta.getBinary(MIGRATED)
  if (mark) {
    checkAlreadyMigrated(legacy, decode(mark) as { files?: LegacyFile[] })
    return { collections: 0, documents: 0, movedTo: moveLegacyFiles(legacy) }
  }
  const files = legacyFiles(legacy)
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
  env.transact(() => env.meta.putSync(MIGRATED, encode({ at: new Date(), collections, documents, files })))
  await env.sync()
  return { collections, documents, movedTo: moveLegacyFiles(legacy) }
}
