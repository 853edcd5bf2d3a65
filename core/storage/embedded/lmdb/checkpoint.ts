import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import path from 'node:path'
import { crc32 } from 'node:zlib'

/**
 * The last checkpoint of an lmdb data file kept in noSync mode: a copy of the meta record of a
 * commit whose pages were fdatasynced, and the boot it was taken in. lmdb writes a commit's pages
 * and then its meta record without fsync, so after a power cut the newest meta record on the disk
 * may name pages that never got there. The environment keeps a read transaction open on the
 * checkpointed commit until the next checkpoint is on the disk, and lmdb never reuses pages a
 * reader can see: that commit stays intact in the file. After a reboot, the file is opened at it.
 *
 * LMDB's meta pages are pages 0 and 1 (the commit's txnid parity picks one); the record starts
 * after the 24-byte page header: magic, version, …, last page at 120, txnid at 128 (144 bytes).
 */
const PAGE_HEADER = 24
const META_BYTES = 144
const TXNID_AT = 128
const FILE_MAGIC = 0x4b434852 // 'HRCK'
const BOOT_BYTES = 36
const RECORD_BYTES = 4 + BOOT_BYTES + META_BYTES + 4

/** This boot's id (Linux); undefined elsewhere, where a checkpoint is never rolled back to. */
export function currentBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, BOOT_BYTES)
  } catch {
    return undefined
  }
}

export interface MetaRecord {
  txnid: bigint
  bytes: Buffer
}

/** The newest of the two meta records in the file as it is now (the kernel's copy). */
export function newestMeta(dataFile: string, pageSize: number): MetaRecord {
  const fd = openSync(dataFile, 'r')
  try {
    const records = [0, 1].map((page) => {
      const bytes = Buffer.alloc(META_BYTES)
      readSync(fd, bytes, 0, META_BYTES, page * pageSize + PAGE_HEADER)
      return { txnid: bytes.readBigUInt64LE(TXNID_AT), bytes }
    })
    return records[0].txnid >= records[1].txnid ? records[0] : records[1]
  } finally {
    closeSync(fd)
  }
}

const checkpointFile = (dir: string) => path.join(dir, 'checkpoint')

/** Records `meta` (already on the disk) as the checkpoint: written to a new file, fsynced, renamed. */
export async function writeCheckpoint(dir: string, meta: MetaRecord, bootId: string | undefined): Promise<void> {
  const record = Buffer.alloc(RECORD_BYTES)
  record.writeUInt32LE(FILE_MAGIC, 0)
  record.write(bootId ?? '', 4, BOOT_BYTES, 'latin1')
  meta.bytes.copy(record, 4 + BOOT_BYTES)
  record.writeUInt32LE(crc32(record.subarray(0, RECORD_BYTES - 4)), RECORD_BYTES - 4)
  const temporary = `${checkpointFile(dir)}.tmp`
  const file = await open(temporary, 'w', 0o600)
  try {
    await file.write(record)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temporary, checkpointFile(dir))
  const folder = await open(dir, 'r')
  try {
    await folder.sync()
  } finally {
    await folder.close()
  }
}

function readCheckpoint(dir: string): { bootId: string; meta: MetaRecord } | undefined {
  if (!existsSync(checkpointFile(dir))) return undefined
  const record = readFileSync(checkpointFile(dir))
  if (
    record.length !== RECORD_BYTES ||
    record.readUInt32LE(0) !== FILE_MAGIC ||
    crc32(record.subarray(0, RECORD_BYTES - 4)) !== record.readUInt32LE(RECORD_BYTES - 4)
  )
    throw new Error(
      `${checkpointFile(dir)} is damaged: the embedded database does not start on it. Restore the data folder from a backup.`,
    )
  const bytes = Buffer.from(record.subarray(4 + BOOT_BYTES, 4 + BOOT_BYTES + META_BYTES))
  return {
    bootId: record.toString('latin1', 4, 4 + BOOT_BYTES).replace(/\0+$/, ''),
    meta: { txnid: bytes.readBigUInt64LE(TXNID_AT), bytes },
  }
}

/**
 * Before lmdb opens the file: if the last checkpoint was taken in another boot (the machine went
 * down since) and the file names a later commit, that commit may be torn or missing, so both meta
 * records are set back to the checkpoint's (the commits after it are lost: at most one checkpoint
 * interval of acknowledged writes). In the same boot (the process was killed) the kernel has every
 * commit and the file is opened as it is. Returns the txnid rolled back from, if any.
 */
export function rollBackAfterReboot(dir: string, pageSize: number): bigint | undefined {
  const dataFile = path.join(dir, 'data.mdb')
  const checkpoint = readCheckpoint(dir)
  const bootId = currentBootId()
  if (!checkpoint || !existsSync(dataFile) || bootId === undefined || checkpoint.bootId === bootId) return undefined
  const newest = newestMeta(dataFile, pageSize)
  if (newest.txnid <= checkpoint.meta.txnid) return undefined
  const fd = openSync(dataFile, 'r+')
  try {
    for (const page of [0, 1]) writeSync(fd, checkpoint.meta.bytes, 0, META_BYTES, page * pageSize + PAGE_HEADER)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return newest.txnid
}
