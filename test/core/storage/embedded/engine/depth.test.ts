import { expect } from 'chai'
import { serialize } from 'bson'
import { exceedsStorageDepth, MAX_USER_STORAGE_DEPTH } from '../../../../../core/storage/embedded/engine/depth.ts'
import { rejection, useTestDb, type Loose } from '../conformance/fixture.ts'

/** A document whose deepest element is at `levels` (top-level fields are level 1), through objects or arrays. */
function nested(levels: number, innermost: unknown = 1, array = false): Record<string, unknown> {
  let value: unknown = innermost
  for (let i = 1; i < levels; i++) value = array && i % 2 === 0 ? [value] : { a: value }
  return { a: value }
}

/**
 * Raw BSON of `wrappers` documents, each holding the next under the empty name, around {x: 1}:
 * its deepest element is at level wrappers + 1. Each wrapper is length, type 0x03, name "", ..., 0x00.
 */
function deepBson(wrappers: number): Buffer {
  const innermost = Buffer.from([12, 0, 0, 0, 0x10, 0x78, 0, 1, 0, 0, 0, 0])
  const bytes = Buffer.alloc(innermost.length + 7 * wrappers)
  for (let k = 0; k < wrappers; k++) {
    bytes.writeInt32LE(innermost.length + 7 * (wrappers - k), 6 * k)
    bytes[6 * k + 4] = 0x03
  }
  innermost.copy(bytes, 6 * wrappers)
  return bytes
}

const INSERT_MESSAGE = `cannot insert document because it exceeds ${MAX_USER_STORAGE_DEPTH} levels of nesting`
const UPDATE_MESSAGE = `Document exceeds maximum nesting depth of ${MAX_USER_STORAGE_DEPTH}`

describe('stored document depth (MongoDB: 180 levels, code 15 Overflow)', () => {
  describe('exceedsStorageDepth', () => {
    it('counts top-level fields as level 1, and objects and arrays alike', () => {
      expect(exceedsStorageDepth(serialize(nested(3)), 3)).to.equal(false)
      expect(exceedsStorageDepth(serialize(nested(4)), 3)).to.equal(true)
      expect(exceedsStorageDepth(serialize(nested(4, 1, true)), 3)).to.equal(true)
      expect(
        exceedsStorageDepth(serialize({ x: 'y', n: 1.5, b: true, z: null, d: new Date(), a: [1, 2, { c: 3 }] }), 3),
      ).to.equal(false)
    })

    it('does not count an empty object or array as a level', () => {
      expect(exceedsStorageDepth(serialize(nested(3, {})), 3)).to.equal(false)
      expect(exceedsStorageDepth(serialize(nested(3, [])), 3)).to.equal(false)
      expect(exceedsStorageDepth(serialize(nested(3, { b: 1 })), 3)).to.equal(true)
    })

    it('walks 100,000 levels without recursing', () => {
      const bytes = serialize(nested(180))
      expect(exceedsStorageDepth(bytes)).to.equal(false)
      // Hand-built: the bson package's own serializer recurses and would overflow the stack first.
      expect(exceedsStorageDepth(deepBson(100_000))).to.equal(true)
      expect(exceedsStorageDepth(deepBson(179))).to.equal(false)
    })
  })

  describe('through the driver', () => {
    const t = useTestDb('depth')
    const coll = () => t.db.collection<Loose>('c')

    it('accepts a document nested exactly to the limit, also with an empty object one level below', async () => {
      await coll().insertOne({ _id: 'limit', ...nested(MAX_USER_STORAGE_DEPTH) })
      await coll().insertOne({ _id: 'limit-empty', ...nested(MAX_USER_STORAGE_DEPTH, {}) })
      expect(await coll().countDocuments({ _id: { $in: ['limit', 'limit-empty'] } })).to.equal(2)
    })

    it('refuses an insert one level deeper, as MongoDB does, and stores nothing of it', async () => {
      for (const array of [false, true]) {
        const error = await rejection(
          coll().insertOne({ _id: `deep-${array}`, ...nested(MAX_USER_STORAGE_DEPTH + 1, 1, array) }),
        )
        expect(error).to.include({ code: 15, codeName: 'Overflow' })
        expect(error.message).to.equal(INSERT_MESSAGE)
      }
      const far = await rejection(coll().insertOne({ _id: 'far', ...nested(1_000) }))
      expect(far.code).to.equal(15)
      expect(await coll().countDocuments({ _id: { $in: ['deep-false', 'deep-true', 'far'] } })).to.equal(0)
    })

    it('fails only the deep document of an unordered insertMany', async () => {
      const error = (await rejection(
        coll().insertMany([{ _id: 'm1' }, { _id: 'm2', ...nested(200) }, { _id: 'm3' }], { ordered: false }),
      )) as { writeErrors?: Array<{ index: number; code: number; errmsg: string }> } & { code?: number }
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors]
      expect(writeErrors.map((e) => e && { index: e.index, code: e.code })).to.deep.equal([{ index: 1, code: 15 }])
      expect(await coll().countDocuments({ _id: { $in: ['m1', 'm2', 'm3'] } })).to.equal(2)
    })

    it('refuses an update, a replacement, an upsert and a findAndModify that would nest too deep, leaving the document as it was', async () => {
      await coll().insertOne({ _id: 'u', a: 1 })
      const deepValue = nested(MAX_USER_STORAGE_DEPTH).a
      const attempts = [
        () => coll().updateOne({ _id: 'u' }, { $set: { b: { c: deepValue } } }),
        () => coll().updateOne({ _id: 'u' }, { $set: { 'b.c': deepValue } }),
        () => coll().replaceOne({ _id: 'u' }, { b: { c: deepValue } }),
        () => coll().updateOne({ _id: 'absent' }, { $set: { b: { c: deepValue } } }, { upsert: true }),
        () => coll().findOneAndUpdate({ _id: 'u' }, { $push: { list: { c: deepValue } } } as Record<string, unknown>),
      ]
      for (const attempt of attempts) {
        const error = await rejection(attempt())
        expect(error.code).to.equal(15)
        expect(error.message).to.equal(UPDATE_MESSAGE)
      }
      expect(await coll().findOne({ _id: 'u' })).to.deep.equal({ _id: 'u', a: 1 })
      expect(await coll().findOne({ _id: 'absent' })).to.equal(null)
      await coll().updateOne({ _id: 'u' }, { $set: { b: deepValue } })
      expect(await coll().countDocuments({ _id: 'u', b: { $exists: true } })).to.equal(1)
    })
  })
})
