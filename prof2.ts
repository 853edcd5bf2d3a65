import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { LmdbEnvironment, walk } from './core/storage/embedded/lmdb/environment.ts'
import { LmdbEntries } from './core/storage/embedded/lmdb/index-entries.ts'
import { LmdbDocStore } from './core/storage/embedded/lmdb/doc-store.ts'
import { encodeKey, encodeKeys } from './core/storage/embedded/engine/key-encoding.ts'
const env = LmdbEnvironment.open(mkdtempSync(path.join(os.tmpdir(), 'p2-')), { compression: false })
const N = 20000
const e = new LmdbEntries(env, 10)
const d = new LmdbDocStore(env, 20)
const raw = Buffer.alloc(1100, 1)
const keys = Array.from({ length: N }, (_, i) => [encodeKeys([1, `0190a1b2-c3d4-7e5f-8a9b-${i}`]), encodeKey(`id${i}`)])
const time = (name: string, fn: () => void) => { const t = performance.now(); env.transact(fn); console.log(name, ((performance.now() - t) * 1000 / N).toFixed(1), 'µs') }
time('entries.insert', () => { for (const [k, id] of keys) e.insert(k, id) })
time('entries.idsWithKey', () => { for (const [k] of keys) e.idsWithKey(k) })
time('docs.put', () => { for (const [, id] of keys) d.put(id, raw) })
time('docs.has', () => { for (const [, id] of keys) d.has(id) })
time('docs.raw', () => { for (const [, id] of keys) d.raw(id) })
time('getRange limit1', () => { for (const [k] of keys) for (const x of env.entries.getRange({ start: Buffer.from(k, 'latin1'), limit: 1 })) {} })
let t = performance.now(); for (const [k] of keys) e.idsWithKey(k); console.log('idsWithKey outside txn', ((performance.now() - t) * 1000 / N).toFixed(1))
