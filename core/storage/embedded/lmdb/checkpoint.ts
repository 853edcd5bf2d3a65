import { closeSync, constants, existsSync, fsyncSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { syncFolder } from '../persistence/data-dir.ts'

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
const LAST_PAGE_AT = 120
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

/** The last page in use in the commit a meta record names. */
export function lastPage(meta: MetaRecord): bigint {
  return meta.bytes.readBigUInt64LE(LAST_PAGE_AT)
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

function encodeRecord(meta: MetaRecord, bootId: string | undefined): Buffer {
  const record = Buffer.alloc(RECORD_BYTES)
  record.writeUInt32LE(FILE_MAGIC, 0)
  record.write(bootId ?? '', 4, BOOT_BYTES, 'latin1')
  meta.bytes.copy(record, 4 + BOOT_BYTES)
  record.writeUInt32LE(crc32(record.subarray(0, RECORD_BYTES - 4)), RECORD_BYTES - 4)
  return record
}

interface Checkpoint {
  bootId: string
  meta: MetaRecord
}

/** One slot's record, or undefined when it is absent or torn (its CRC does not match). */
function decodeRecord(file: Buffer, slot: number): Checkpoint | undefined {
  const record = file.subarray(slot * RECORD_BYTES, (slot + 1) * RECORD_BYTES)
  if (
    record.length !== RECORD_BYTES ||
    record.readUInt32LE(0) !== FILE_MAGIC ||
    crc32(record.subarray(0, RECORD_BYTES - 4)) !== record.readUInt32LE(RECORD_BYTES - 4)
  )
    return undefined
  const bytes = Buffer.from(record.subarray(4 + BOOT_BYTES, 4 + BOOT_BYTES + META_BYTES))
  return {
    bootId: record.toString('latin1', 4, 4 + BOOT_BYTES).replace(/\0+$/, ''),
    meta: { txnid: bytes.readBigUInt64LE(TXNID_AT), bytes },
  }
}

/** The slot holding the newer of two records (-1: neither is whole). */
function newestSlot(records: Array<Checkpoint | undefined>): number {
  const [a, b] = records
  if (!a) return b ? 1 : -1
  return b && b.meta.txnid > a.meta.txnid ? 1 : 0
}

/**
 * The checkpoint file: two slots of one record each, written in turn in place (pwrite, fdatasync),
 * like LMDB's own two meta pages. A record torn by a power cut during its write fails its CRC and
 * the other slot, the checkpoint before, is used: its commit's pages are intact, since the
 * environment lets go of that commit only once the new record is on the disk. Writing in place
 * costs one fdatasync; a new file renamed over the old cost an fsync of the file and one of the
 * folder, about 4 ms and 0.6 ms of CPU more per checkpoint here, and a checkpoint runs before every
 * j: true reply. (A file of one record, as written before, reads as slot 0.)
 */
export class CheckpointFile {
  private handle: FileHandle | undefined
  private nextSlot = 0
  private created = false

  constructor(private readonly dir: string) {}

  private async open(): Promise<FileHandle> {
    if (this.handle) return this.handle
    const file = checkpointFile(this.dir)
    this.created = !existsSync(file)
    const handle = await open(file, constants.O_RDWR | constants.O_CREAT, 0o600)
    const current = (await handle.readFile()) as Buffer
    this.nextSlot = 1 - Math.max(0, newestSlot([decodeRecord(current, 0), decodeRecord(current, 1)]))
    this.handle = handle
    return handle
  }

  /** Records `meta` (already on the disk) as the checkpoint. */
  async write(meta: MetaRecord, bootId: string | undefined): Promise<void> {
    const handle = await this.open()
    await handle.write(encodeRecord(meta, bootId), 0, RECORD_BYTES, this.nextSlot * RECORD_BYTES)
    await handle.datasync()
    this.nextSlot = 1 - this.nextSlot
    if (!this.created) return
    // a new file's name is on the disk once its folder is synced
    await syncFolder(this.dir)
    this.created = false
  }

  async close(): Promise<void> {
    await this.handle?.close()
    this.handle = undefined
  }
}

function readCheckpoint(dir: string): Checkpoint | undefined {
  if (!existsSync(checkpointFile(dir))) return undefined
  const file = readFileSync(checkpointFile(dir))
  const records = [decodeRecord(file, 0), decodeRecord(file, 1)]
  const newest = newestSlot(records)
  if (newest === -1)
    throw new Error(
      `${checkpointFile(dir)} is damaged: the embedded database does not start on it. Restore the data folder from a backup.`,
    )
  return records[newest]
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
