import { closeSync, fstatSync, openSync, writeSync } from 'node:fs'

/** How far past lmdb's last page the file is written ahead, and when to write more. */
const AHEAD_BYTES = 16 * 1024 * 1024
const LOW_WATER_BYTES = 8 * 1024 * 1024

/**
 * Keeps lmdb's data file written ahead of its last page with zeros, one page per write(2).
 *
 * Linux caches a file in folios as large as the writes that created them (up to megabytes, ext4 on
 * 6.x kernels), and writes a dirty folio back whole. lmdb grows its file with long writes of
 * consecutive new pages, and later rewrites those pages one at a time (copy-on-write reuses freed
 * pages): each such page then dirtied its whole folio, and during capture the database sent 40 to
 * 80 KiB to the disk per stored event for the 9 to 16 KiB it wrote (test/bench/engine-writes.ts,
 * /proc/<pid>/io), paying the extra writeback in the fdatasync of every checkpoint. A page that
 * exists before lmdb writes it sits in a page-sized folio. (The environment also opens the map with
 * noReadAhead, so that a page read back after eviction or a restart is not cached in a large folio.)
 *
 * The zeros lie beyond lmdb's last page, which lmdb treats as free space at the end of the file.
 * extend() must run while no write transaction is open: a transaction may write (spill) pages
 * past the last committed page before it commits.
 */
export class FileExtender {
  private end: number

  constructor(
    private readonly file: string,
    private readonly pageSize: number,
  ) {
    const fd = openSync(file, 'r')
    try {
      this.end = fstatSync(fd).size
    } finally {
      closeSync(fd)
    }
  }

  /** The file's end is near the page after `lastPage` (lmdb's last page in use, from a meta record). */
  due(lastPage: bigint): boolean {
    return this.end - this.bytesAfter(lastPage) < LOW_WATER_BYTES
  }

  private bytesAfter(lastPage: bigint): number {
    return (Number(lastPage) + 1) * this.pageSize
  }

  /**
   * Writes zero pages from the end of the file (or of lmdb's pages) to AHEAD_BYTES past lmdb's last
   * page. A failure (a full disk) stops it quietly: the zeros only spare writeback, and lmdb reports
   * a full disk on its own writes.
   */
  extend(lastPage: bigint): void {
    const used = this.bytesAfter(lastPage)
    const target = used + AHEAD_BYTES
    let at = Math.max(Math.ceil(this.end / this.pageSize) * this.pageSize, used)
    if (at >= target) return
    const zero = Buffer.alloc(this.pageSize)
    let fd: number | undefined
    try {
      fd = openSync(this.file, 'r+')
      for (; at < target; at += this.pageSize) writeSync(fd, zero, 0, this.pageSize, at)
    } catch {
      // tried again at the next checkpoint that finds the end near
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
    this.end = Math.max(this.end, at)
  }
}
