import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { LmdbEnvironment } from './core/storage/embedded/lmdb/environment.ts'
const env = LmdbEnvironment.open(mkdtempSync(path.join(os.tmpdir(), 'p3-')), { compression: false })
const N = 20000
const raw = Buffer.alloc(1100, 1)
const ks = Array.from({ length: N }, (_, i) => Buffer.from(`xxxx0190a1b2-c3d4-7e5f-8a9b-${i}`, 'latin1'))
const time = (name: string, fn: () => void, txn = true) => { const t = performance.now(); txn ? env.transact(fn) : fn(); console.log(name, ((performance.now() - t) * 1000 / N).toFixed(1), 'µs') }
time('put 1100', () => { for (const k of ks) env.docs.putSync(k, raw) })
time('put small', () => { for (const k of ks) env.meta.putSync(k, raw.subarray(0, 24)) })
time('getBinary in txn', () => { for (const k of ks) env.docs.getBinary(k) })
time('getBinaryFast+copy in txn', () => { for (const k of ks) Buffer.from(env.docs.getBinaryFast(k)!) })
time('getBinary outside', () => { for (const k of ks) env.docs.getBinary(k) }, false)
time('getBinaryFast+copy outside', () => { for (const k of ks) Buffer.from(env.docs.getBinaryFast(k)!) }, false)
time('get miss', () => { for (const k of ks) env.entries.getBinaryFast(k) })
