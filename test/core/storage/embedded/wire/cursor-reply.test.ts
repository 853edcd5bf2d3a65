import { expect } from 'chai'
import { deserialize, Long, serialize } from 'bson'
import { cursorReply } from '../../../../../core/storage/embedded/wire/cursor-reply.ts'

describe('cursor replies', () => {
  const docs = Array.from({ length: 123 }, (_, i) => serialize({ _id: i, n: Long.fromNumber(i), s: 'é'.repeat(i % 3) }))

  it('hold the stored documents, the cursor id as an int64, the namespace and any extra fields, as BSON', () => {
    const reply = cursorReply('firstBatch', docs, 2 ** 40 + 7, 'dé.events', { postBatchResumeToken: { _data: 'x' } })
    const expected = serialize({
      cursor: {
        firstBatch: docs.map((d) => deserialize(d, { promoteLongs: false })),
        id: Long.fromNumber(2 ** 40 + 7),
        ns: 'dé.events',
        postBatchResumeToken: { _data: 'x' },
      },
      ok: 1,
    })
    expect(Buffer.compare(reply, Buffer.from(expected))).to.equal(0)
  })

  it('answers an empty last batch with cursor id 0', () => {
    const reply = deserialize(cursorReply('nextBatch', [], 0, 'app.c'), { promoteLongs: false })
    expect(reply).to.deep.equal({ cursor: { nextBatch: [], id: Long.fromNumber(0), ns: 'app.c' }, ok: 1 })
  })
})
