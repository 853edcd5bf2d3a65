import { open } from 'node:fs/promises'
import { encode } from '../bson/codec.ts'
import type { Catalog } from '../engine/catalog.ts'
import { FILE_MODE } from './data-dir.ts'
import { encodeRecord, RecordOp } from './records.ts'

/**
 * The state to snapshot, captured synchronously. Stored documents are immutable buffers (an
 * update stores a new one), so copying the references is a consistent image even while the
 * snapshot is written out asynchronously and writes continue.
 */
export interface SnapshotImage {
  collections: Array<{ ns: string; head: Buffer[]; docs: Buffer[] }>
}

export function captureImage(catalog: Catalog): SnapshotImage {
  const collections: SnapshotImage['collections'] = []
  for (const coll of catalog.all()) {
    const head = [
      encodeRecord(RecordOp.createCollection, coll.ns, encode({ uuid: coll.uuid, options: coll.options })),
      ...coll.readyIndexes.map((ix) => encodeRecord(RecordOp.createIndex, coll.ns, encode({ ...ix.spec }))),
    ]
    collections.push({ ns: coll.ns, head, docs: coll.image() })
  }
  return { collections }
}

const BATCH_BYTES = 4 * 1024 * 1024

/**
 * Writes the image as records ending with an END record, then fsyncs. Yields to the event loop
 * between batches so the server keeps answering; `aborted()` stops it early (server closing).
 */
export async function writeSnapshot(path: string, image: SnapshotImage, aborted: () => boolean): Promise<boolean> {
  const file = await open(path, 'w', FILE_MODE)
  try {
    let batch: Buffer[] = []
    let bytes = 0
    const flush = async () => {
      if (bytes === 0) return
      await file.write(Buffer.concat(batch, bytes))
      batch = []
      bytes = 0
    }
    const add = (record: Buffer) => {
      batch.push(record)
      bytes += record.length
    }
    for (const coll of image.collections) {
      coll.head.forEach(add)
      for (const doc of coll.docs) {
        add(encodeRecord(RecordOp.put, coll.ns, doc))
        if (bytes < BATCH_BYTES) continue
        await flush()
        if (aborted()) return false
      }
    }
    add(encodeRecord(RecordOp.end, ''))
    await flush()
    await file.sync()
    return true
  } finally {
    await file.close()
  }
}
