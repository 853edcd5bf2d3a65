import { expect } from 'chai'
import { serialize, type Document } from 'bson'
import { OpCode, parseFrame, ProtocolError } from '../../../../../core/storage/embedded/wire/messages.ts'

/** An OP_MSG frame: a body section and one document sequence (kind 1), as drivers send an insert. */
function opMsg(body: Document, id: string, docs: Uint8Array[]): Buffer {
  const name = Buffer.from(`${id}\0`, 'utf8')
  const sequenceSize = 4 + name.length + docs.reduce((n, d) => n + d.length, 0)
  const sequence = Buffer.alloc(4)
  sequence.writeInt32LE(sequenceSize)
  const parts = [Buffer.from([0]), serialize(body), Buffer.from([1]), sequence, name, ...docs]
  const header = Buffer.alloc(20)
  const length = header.length + parts.reduce((n, p) => n + p.length, 0)
  header.writeInt32LE(length, 0)
  header.writeInt32LE(1, 4)
  header.writeInt32LE(OpCode.msg, 12)
  return Buffer.concat([header, ...parts])
}

describe('wire messages: OP_MSG document sequences', () => {
  const docs = [{ _id: 1, a: 'é' }, { b: [1, { c: 2 }] }]

  it("keeps an insert's documents as sent, decoding them only when read", () => {
    const raws = docs.map((d) => serialize(d))
    const cmd = parseFrame(opMsg({ insert: 'events', $db: 'test' }, 'documents', raws))
    expect(cmd.sequences.get('documents')?.map((d) => Buffer.from(d).toString('hex'))).to.deep.equal(
      raws.map((d) => Buffer.from(d).toString('hex')),
    )
    expect(Object.keys(cmd.body)).to.deep.equal(['insert', '$db', 'documents'])
    expect(cmd.body.documents).to.deep.equal(docs)
  })

  it('decodes the documents of other sequences (updates, deletes) as they arrive', () => {
    const updates = [{ q: { _id: 1 }, u: { $set: { a: 1 } } }]
    const cmd = parseFrame(
      opMsg(
        { update: 'events', $db: 'test' },
        'updates',
        updates.map((d) => serialize(d)),
      ),
    )
    expect(Object.getOwnPropertyDescriptor(cmd.body, 'updates')?.value).to.deep.equal(updates)
  })

  it('refuses a malformed inserted document as a protocol error (the connection closes), not later', () => {
    const bad = Buffer.from(serialize({ a: 'abc' }))
    bad[bad.indexOf('abc') + 1] = 0xff // invalid UTF-8
    const frame = opMsg({ insert: 'events', $db: 'test' }, 'documents', [serialize({ ok: 1 }), bad])
    expect(() => parseFrame(frame)).to.throw(ProtocolError, /document sequence 'documents'.*UTF-8/)
  })
})
