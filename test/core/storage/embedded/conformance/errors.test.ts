import { expect } from 'chai'
import { rejection, useTestDb, type Loose } from './fixture.ts'

/** Errors a client gets for what MongoDB does not know either. */
describe('MongoDB conformance: errors', () => {
  const t = useTestDb('errors')
  const coll = () => t.db.collection<Loose>('c')

  before(async () => {
    await coll().insertOne({ a: 1 })
  })

  it('answers an unknown command with CommandNotFound naming it', async () => {
    const error = await rejection(t.db.command({ frobnicate: 1 }))
    expect(error.code).to.equal(59)
    expect(error.message).to.include('frobnicate')
  })

  it('answers an unknown query operator with BadValue naming it', async () => {
    const error = await rejection(
      coll()
        .find({ a: { $frob: 1 } })
        .toArray(),
    )
    expect(error.code).to.equal(2)
    expect(error.message).to.include('$frob')
    expect((await rejection(coll().find({ $frob: [] }).toArray())).code).to.equal(2)
  })

  it('answers an unknown pipeline stage and an unknown expression', async () => {
    const stage = await rejection(
      coll()
        .aggregate([{ $frob: {} }])
        .toArray(),
    )
    expect(stage.code).to.equal(40324)
    expect(stage.message).to.include('$frob')
    const expression = await rejection(
      coll()
        .aggregate([{ $project: { x: { $frob: 1 } } }])
        .toArray(),
    )
    expect(expression.code).to.equal(168)
    expect(expression.message).to.include('$frob')
  })

  it('answers a getMore on a cursor that does not exist with CursorNotFound', async () => {
    expect((await rejection(t.db.command({ getMore: 424242, collection: 'c' }))).code).to.equal(43)
  })
})
