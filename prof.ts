import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { encode, decode } from './core/storage/embedded/bson/codec.ts'
import { Catalog } from './core/storage/embedded/engine/catalog.ts'
import { SILENT } from './core/storage/embedded/persistence/journal.ts'
import { LmdbStore } from './core/storage/embedded/lmdb/store.ts'
import { eventDocument, EVENT_INDEXES } from './test/bench/event-documents.ts'
import { prepareInsert } from './core/storage/embedded/engine/writes.ts'
const N = Number(process.env.N ?? 20000)
const docs = Array.from({ length: N }, (_, i) => { const d = eventDocument(i); const raw = encode(d); return prepareInsert(raw, decode(raw)) })
for (const engine of ['memory', 'lmdb']) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prof-'))
  let catalog: Catalog, transact = (fn: () => void) => fn(), store: LmdbStore | undefined
  if (engine === 'lmdb') { store = await LmdbStore.open(dir, { syncIntervalMs: 100, compactMinBytes: 0, compression: process.env.COMP === '1' }); catalog = store.catalog; catalog.setListener(store.listener); transact = (fn) => store!.transact(fn) }
  else catalog = new Catalog(SILENT)
  const coll = catalog.ensure('db', 'events')
  transact(() => { for (const ix of EVENT_INDEXES) catalog.createIndex(coll, ix as never) })
  let t = performance.now()
  for (let i = 0; i < N; i += 1000) transact(() => { for (let k = i; k < i + 1000; k++) coll.insert(docs[k].raw, docs[k].doc) })
  console.log(engine, 'insert/doc µs', ((performance.now() - t) * 1000 / N).toFixed(1))
  t = performance.now()
  const ix = coll.index('project_uuid_unique')!
  let n = 0
  for (let i = 0; i < 20000; i++) { const ids = ix.entries.idsWithKey([...ix.entries.range('', '\uffff', false)].length ? '' : ''); n += ids.length; break }
  const lat: number[] = []
  for (let i = 0; i < 2000; i++) {
    const d = docs[(i * 7919) % N].doc
    const s = performance.now()
    const keys = ix.keysOf(d)
    const ids = ix.entries.idsWithKey(keys[0].key)
    coll.raw(ids[0])
    lat.push(performance.now() - s)
  }
  lat.sort((a, b) => a - b)
  console.log(engine, 'indexed lookup p50/p99 µs', (lat[1000] * 1000).toFixed(1), (lat[1980] * 1000).toFixed(1))
  if (store) { console.log('file MB', (store.fileBytes() / 1e6).toFixed(1), 'data MB', (coll.dataBytes / 1e6).toFixed(1)); await store.close() }
  rmSync(dir, { recursive: true, force: true })
}
