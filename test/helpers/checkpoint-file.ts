import { crc32 } from 'node:zlib'

/**
 * The lmdb engine's checkpoint file, read and changed by hand as a power cut would leave it: two
 * slots, each magic, boot id (36 bytes), a copy of lmdb's 144-byte meta record, CRC-32.
 */
export const CHECKPOINT_META = 4 + 36
export const CHECKPOINT_RECORD = CHECKPOINT_META + 144 + 4

export const wholeRecord = (record: Buffer) =>
  record.length === CHECKPOINT_RECORD &&
  crc32(record.subarray(0, CHECKPOINT_RECORD - 4)) === record.readUInt32LE(CHECKPOINT_RECORD - 4)

export const slots = (file: Buffer) =>
  [0, 1].map((slot) => file.subarray(slot * CHECKPOINT_RECORD, (slot + 1) * CHECKPOINT_RECORD))

/** `file` with every whole record's boot set to an earlier one (the machine has rebooted since). */
export function fromEarlierBoot(file: Buffer): Buffer {
  const copy = Buffer.from(file)
  for (const record of slots(copy)) {
    if (!wholeRecord(record)) continue
    record.write('00000000-0000-4000-8000-000000000000', 4, 36, 'latin1')
    record.writeUInt32LE(crc32(record.subarray(0, CHECKPOINT_RECORD - 4)), CHECKPOINT_RECORD - 4)
  }
  return copy
}
