import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'

/**
 * Layout of a data folder:
 *   mongod.lock            pid and socket of the server using it (the lock itself: folder-lock.ts)
 *   mongod.sock            the server's Unix socket (unless the path is too long for one)
 *   snapshot-<gen>.bin     complete snapshot: the state when wal-<gen> began
 *   snapshot-<gen>.tmp     snapshot being written (ignored and removed at start)
 *   wal-<gen>.log          records after snapshot <gen>, in order
 */
const SNAPSHOT = /^snapshot-(\d{8})\.bin$/
const WAL = /^wal-(\d{8})\.log$/

const pad = (gen: number) => String(gen).padStart(8, '0')

export class DataDir {
  constructor(readonly dir: string) {}

  snapshotPath(gen: number, tmp = false): string {
    return path.join(this.dir, `snapshot-${pad(gen)}.${tmp ? 'tmp' : 'bin'}`)
  }

  walPath(gen: number): string {
    return path.join(this.dir, `wal-${pad(gen)}.log`)
  }

  private list(pattern: RegExp): number[] {
    return readdirSync(this.dir)
      .map((name) => pattern.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
  }

  snapshots(): number[] {
    return this.list(SNAPSHOT)
  }

  wals(): number[] {
    return this.list(WAL)
  }

  removeTemporaries(): void {
    for (const name of readdirSync(this.dir))
      if (name.endsWith('.tmp')) rmSync(path.join(this.dir, name), { force: true })
  }

  /** Removes snapshots and logs made obsolete by snapshot `gen`. */
  removeBefore(gen: number): void {
    for (const g of this.snapshots()) if (g < gen) rmSync(this.snapshotPath(g), { force: true })
    for (const g of this.wals()) if (g < gen) rmSync(this.walPath(g), { force: true })
  }

  /** Makes renames and new files in the folder durable. */
  syncDir(): void {
    syncFolderSync(this.dir)
  }

  /**
   * Creates the folder private to this user (0700, files 0600: the log holds the projects' secret
   * keys), and narrows the modes of a folder an older version left readable. Returns what could
   * not be narrowed (a file owned by another user), for the caller to report.
   */
  makePrivate(): string[] {
    mkdirSync(this.dir, { recursive: true, mode: FOLDER_MODE })
    const problems: string[] = []
    const narrow = (target: string, mode: number) => {
      try {
        if ((statSync(target).mode & 0o777) !== mode) chmodSync(target, mode)
      } catch (error) {
        problems.push(`${target}: ${(error as Error).message}`)
      }
    }
    narrow(this.dir, FOLDER_MODE)
    for (const entry of readdirSync(this.dir, { withFileTypes: true })) {
      if (entry.isFile() || entry.isSocket()) narrow(path.join(this.dir, entry.name), FILE_MODE)
    }
    return problems
  }
}

export const FOLDER_MODE = 0o700
export const FILE_MODE = 0o600

/** Puts the names of the files made or removed in `dir` on the disk. */
export function syncFolderSync(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** syncFolderSync from the thread pool. */
export async function syncFolder(dir: string): Promise<void> {
  const folder = await open(dir, 'r')
  try {
    await folder.sync()
  } finally {
    await folder.close()
  }
}
