/**
 * The person search among 100,000 persons on the embedded store (each engine, over TCP through the
 * driver): the searches go through the search indexes (explain) and read about as many documents
 * as they list (serverStatus' scannedObjects), where a scan would read every person. Also the
 * prefix range, checked against a plain `startsWith`.
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { startEmbeddedMongo } from '../../../core/storage/embedded/index.ts'
import type { EmbeddedMongo } from '../../../core/storage/embedded/index.ts'
import { PERSON_COLLECTIONS, ensurePersonIndexes } from '../../../plugins/persons/person-store.ts'
import type { PersonDocument } from '../../../plugins/persons/person-store.ts'
import { PersonSearch, ensureSearchIndexes, prefixRange, propertyFilter } from '../../../plugins/persons/search.ts'

const PERSONS = 100_000
const BATCH = 5_000
const PROJECT = 1
/** Documents a page of 25 may read: the persons listed, one distinct id read per person, and a few past the end. */
const SCANNED_BOUND = 120

describe('person search: prefix range', () => {
  it('holds exactly the strings that start with the text, in both string orders', () => {
    const texts = ['ann', 'a', 'x\u00ff', 'é', 'z\ud7fe', 'zz\ud7ff', 'q\uffff', 'w😀', '😀']
    const others = [
      '',
      'an',
      'ann',
      'anna',
      'ano',
      'b',
      'x\u00ff\u0000',
      'x\u0100',
      'é!',
      'f',
      'z\ud7fe\uffff',
      'z\ud7ff',
    ]
    const candidates = [...others, ...texts.flatMap((t) => [t, `${t}a`, `${t}\uffff`, `${t}😀`, `${t}\u{10ffff}`])]
    const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
    const utf16 = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
    for (const text of texts) {
      const range = prefixRange(text)
      for (const compare of [utf8, utf16])
        for (const s of candidates) {
          const inRange = compare(s, range.$gte) >= 0 && (range.$lt === undefined || compare(s, range.$lt) < 0)
          // every string with the prefix is in the range (the range may hold a few more: they are filtered)
          if (s.startsWith(text))
            expect(inRange, `${JSON.stringify(s)} in the range of ${JSON.stringify(text)}`).to.equal(true)
        }
      if (/^[a-z]+$/.test(text))
        expect(range.$lt).to.equal(text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) + 1))
    }
  })
})

for (const engine of ['memory', 'lmdb'] as const) {
  describe(`person search among ${PERSONS.toLocaleString('en')} persons on the embedded store (${engine})`, function () {
    this.timeout(240_000)
    let server: EmbeddedMongo
    let client: MongoClient
    let db: Db
    let dataDir: string
    const search = () => new PersonSearch(db, ['email', 'name'])
    const scanned = async () =>
      Number((await db.admin().command({ serverStatus: 1 })).metrics.queryExecutor.scannedObjects)
    /** The documents `run` read, and what it returned. */
    const measured = async <T>(run: () => Promise<T>): Promise<{ value: T; read: number }> => {
      const before = await scanned()
      const value = await run()
      return { value, read: (await scanned()) - before }
    }

    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-person-search-'))
      server = await startEmbeddedMongo({
        dataDir,
        engine,
        tcp: { host: '127.0.0.1', port: 0 },
        syncIntervalMs: 60_000,
      })
      client = new MongoClient(server.tcpUrl!)
      await client.connect()
      db = client.db('persons_search')
      await ensurePersonIndexes(db)
      await ensureSearchIndexes(db, ['email', 'name'])
      await insertPersons(db)
    })
    after(async () => {
      await client?.close()
      await server?.close()
      if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    })

    it('finds persons by email prefix through the email index, reading about as many as it lists', async () => {
      const { value: hits, read } = await measured(() =>
        search().find(PROJECT, { kind: 'prefix', text: 'user4242' }, 26),
      )
      // ordered by value: '0' sorts before '@'
      expect(hits.map((h) => h.result.matched.value)).to.deep.equal([
        ...Array.from({ length: 10 }, (_, i) => `user4242${i}@example.test`),
        'user4242@example.test',
      ])
      expect(hits[10]!.result.distinct_ids).to.deep.equal(['id-4242'])
      expect(read).to.be.at.most(SCANNED_BOUND)
      const plan = await db
        .collection<PersonDocument>(PERSON_COLLECTIONS.persons)
        .find(propertyFilter(PROJECT, 'email', { kind: 'prefix', text: 'user4242' }))
        .sort({ 'properties.email': 1, id: 1 })
        .explain()
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).to.contain('"IXSCAN"').and.contain('search_email')
    })

    it('pages through a prefix shared by 11,111 persons, each page reading about one page of persons', async () => {
      let after: Parameters<PersonSearch['find']>[3]
      const seen = new Set<string>()
      for (let page = 0; page < 3; page++) {
        const { value: hits, read } = await measured(() =>
          search().find(PROJECT, { kind: 'prefix', text: 'user1' }, 26, after),
        )
        expect(hits).to.have.length(26)
        for (const hit of hits.slice(0, 25)) seen.add(hit.result.id)
        expect(read).to.be.at.most(SCANNED_BOUND)
        after = hits[24]!.position
      }
      expect(seen.size).to.equal(75)
    })

    it('finds by distinct id prefix and by exact value through their indexes', async () => {
      const byId = await measured(() => search().find(PROJECT, { kind: 'prefix', text: 'id-9999' }, 26))
      expect(byId.value.map((h) => h.result.matched)).to.have.length(11)
      expect(byId.value[0]!.result.matched).to.deep.equal({ field: 'distinct_id', value: 'id-9999' })
      expect(byId.read).to.be.at.most(SCANNED_BOUND)
      const exact = await measured(() =>
        search().find(PROJECT, { kind: 'exact', property: 'name', value: 'Person 77777' }, 26),
      )
      expect(exact.value.map((h) => h.result.distinct_ids)).to.deep.equal([['id-77777']])
      expect(exact.read).to.be.at.most(5)
    })

    // the count is the engines' shared query code: one scan of 100,000 (the memory engine's, faster) is enough
    if (engine === 'memory')
      it('reads every person when the same filter is made to scan (so the counts above are not trivially small)', async () => {
        const { read } = await measured(() =>
          db
            .collection<PersonDocument>(PERSON_COLLECTIONS.persons)
            .find(propertyFilter(PROJECT, 'email', { kind: 'prefix', text: 'user4242' }))
            .hint({ $natural: 1 })
            .toArray(),
        )
        expect(read).to.be.at.least(PERSONS)
      })
  })
}

/** Persons id-0 … id-99999 with emails user<i>@example.test and names "Person <i>", inserted in batches. */
async function insertPersons(db: Db): Promise<void> {
  const persons = db.collection(PERSON_COLLECTIONS.persons)
  const distinctIds = db.collection(PERSON_COLLECTIONS.distinctIds)
  const createdAt = new Date()
  for (let start = 0; start < PERSONS; start += BATCH) {
    const range = Array.from({ length: Math.min(BATCH, PERSONS - start) }, (_, k) => start + k)
    await persons.insertMany(
      range.map((i) => ({
        project_id: PROJECT,
        id: `person-${i}`,
        properties: { email: `user${i}@example.test`, name: `Person ${i}`, plan: i % 2 ? 'pro' : 'free' },
        is_identified: true,
        created_at: createdAt,
        version: 0,
      })),
      { ordered: false },
    )
    await distinctIds.insertMany(
      range.map((i) => ({ project_id: PROJECT, distinct_id: `id-${i}`, person_id: `person-${i}`, version: 0 })),
      { ordered: false },
    )
  }
}
