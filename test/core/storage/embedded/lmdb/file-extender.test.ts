import { expect } from 'chai'
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { FileExtender } from '../../../../../core/storage/embedded/lmdb/file-extender.ts'
import { withEmbeddedDb } from '../../../../helpers/embedded.ts'
import { folderPerTest } from '../../../../helpers/folders.ts'

const PAGE = 8192

interface Doc {
  _id: number | string
  pad?: string
}
const MIB = 1024 * 1024
/** lmdb's meta records: pages 0 and 1, a 24-byte page header, the last page in use at byte 120. */
const newestLastPage = (file: Buffer) => {
  const at = (page: number, offset: number) => file.readBigUInt64LE(page * PAGE + 24 + offset)
  return at(0, 128) >= at(1, 128) ? at(0, 120) : at(1, 120)
}

describe('lmdb file extender', function () {
  this.timeout(60_000)
  let dir: string
  folderPerTest('hedgerow-extend-', (folder) => (dir = folder))

  it('writes zero pages from the end of the file to 16 MiB past the last page in use, leaving the pages before alone', () => {
    const file = path.join(dir, 'data.mdb')
    const pages = Buffer.alloc(3 * PAGE, 0x5a)
    writeFileSync(file, pages)
    const extender = new FileExtender(file, PAGE)
    expect(extender.due(2n)).to.equal(true)
    extender.extend(2n)
    const after = readFileSync(file)
    expect(after.length).to.equal(3 * PAGE + 16 * MIB)
    expect(after.subarray(0, 3 * PAGE).equals(pages)).to.equal(true)
    expect(after.subarray(3 * PAGE).every((b) => b === 0)).to.equal(true)
    // not due again until lmdb's pages come within 8 MiB of the end
    expect(extender.due(2n)).to.equal(false)
    expect(extender.due(BigInt(3 + (8 * MIB) / PAGE))).to.equal(true)
  })

  it('gives up quietly when the file cannot be written (the zeros only spare writeback)', () => {
    const file = path.join(dir, 'data.mdb')
    writeFileSync(file, Buffer.alloc(2 * PAGE))
    const extender = new FileExtender(file, PAGE)
    rmSync(file)
    expect(() => extender.extend(1n)).not.to.throw()
    expect(extender.due(1n)).to.equal(true)
  })

  it("keeps the embedded database's file written ahead of lmdb's pages as it grows, and the data reads back after a restart", async () => {
    const dataDir = path.join(dir, 'mongo')
    const dataFile = path.join(dataDir, 'lmdb', 'data.mdb')
    const docs = Array.from({ length: 4000 }, (_, i) => ({ _id: i, pad: 'x'.repeat(4000) }))
    await withEmbeddedDb({ dataDir, engine: 'lmdb', syncIntervalMs: 10 }, async (db) => {
      for (let i = 0; i < docs.length; i += 500)
        await db.collection<Doc>('c').insertMany(docs.slice(i, i + 500), { writeConcern: { j: true } })
      await db.collection<Doc>('c').insertOne({ _id: 'last' }, { writeConcern: { j: true } })
    })
    const file = readFileSync(dataFile)
    const used = (Number(newestLastPage(file)) + 1) * PAGE
    expect(used, 'the documents grew the file past one extension').to.be.greaterThan(16 * MIB)
    expect(statSync(dataFile).size - used).to.be.at.least(8 * MIB)
    expect(file.subarray(used).every((b) => b === 0)).to.equal(true)
    await withEmbeddedDb({ dataDir, engine: 'lmdb' }, async (db) => {
      expect(await db.collection<Doc>('c').countDocuments()).to.equal(docs.length + 1)
      expect(await db.collection<Doc>('c').findOne({ _id: 3999 })).to.deep.equal(docs[3999])
    })
  })
})
