import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/**
 * Layout of a data folder:
 *   mongod.lock            pid of the server using it
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
    for (const name of readdirSync(this.dir)) if (name.endsWith('.tmp')) rmSync(path.join(this.dir, name), { force: true })
  }

  /** Removes snapshots and logs made obsolete by snapshot `gen`. */
  removeBefore(gen: number): void {
    for (const g of this.snapshots()) if (g < gen) rmSync(this.snapshotPath(g), { force: true })
    for (const g of this.wals()) if (g < gen) rmSync(this.walPath(g), { force: true })
  }

  /** Makes renames and new files in the folder durable. */
  syncDir(): void {
    const fd = openSync(this.dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  /**
   * Takes the folder for this process. A lock left by a dead process (kill -9) is taken over; one
   * held by a live process is refused, since two servers on one folder would corrupt it.
   */
  lock(): void {
    mkdirSync(this.dir, { recursive: true })
    const lockPath = path.join(this.dir, 'mongod.lock')
    let holder = NaN
    try {
      holder = Number(readFileSync(lockPath, 'utf8').trim())
    } catch {
      // no lock file: free
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new Error(`data folder ${this.dir} is in use by process ${holder} (${lockPath})`)
    }
    if (holder === process.pid && HELD.has(this.dir)) throw new Error(`data folder ${this.dir} is already open in this process`)
    writeFileSync(lockPath, String(process.pid))
    HELD.add(this.dir)
  }

  unlock(): void {
    HELD.delete(this.dir)
    rmSync(path.join(this.dir, 'mongod.lock'), { force: true })
  }
}

const HELD = new Set<string>()

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
