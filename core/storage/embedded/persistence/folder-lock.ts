/**
 * One server per data folder, enforced by a lock the kernel releases when its holder dies, so that
 * a restart right after `kill -9` starts, even while the dead process is not yet reaped or when its
 * PID has been reused (a PID file checked with kill(pid, 0) gets both wrong).
 *
 * - Linux: a listening Unix socket in the abstract namespace, named after the folder's device and
 *   inode. bind(2) is atomic (two simultaneous starters: exactly one wins) and the kernel closes
 *   the socket while tearing the process down, before it becomes a zombie. Node has no flock(2);
 *   this needs nothing outside Node. Abstract names are scoped to the network namespace, so the
 *   server's own socket in the folder is probed as well (see `probeServerSocket`).
 * - macOS and the BSDs: the lock file opened with O_EXLOCK | O_NONBLOCK, i.e. flock(2) taken
 *   atomically at open; the kernel drops it when the last descriptor closes.
 * - Elsewhere: no kernel lock; only the probe of the server's socket (a live server answers, a
 *   dead one's socket refuses). Two servers started at the same instant could both pass it.
 *
 * `mongod.lock` holds the holder's PID and socket, for people and for the refusal message only.
 */
import { createHash } from 'node:crypto'
import {
  closeSync,
  constants,
  ftruncateSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import path from 'node:path'

export const LOCK_FILE = 'mongod.lock'
/** A holder being torn down by the kernel (large heaps take a while to unmap) is waited for this long. */
export const DEFAULT_LOCK_WAIT_MS = 2_000
const RETRY_MS = 50
const PROBE_TIMEOUT_MS = 1_000
/** open(2)'s "take flock(LOCK_EX) atomically" flag: the same value on macOS, FreeBSD, OpenBSD and NetBSD. */
const O_EXLOCK = 0x20
const BSD_FAMILY = new Set<NodeJS.Platform>(['darwin', 'freebsd', 'openbsd', 'netbsd'])

export type LockMechanism = 'abstract-socket' | 'o-exlock' | 'socket-probe'

export function lockMechanism(platform: NodeJS.Platform = process.platform): LockMechanism {
  if (platform === 'linux') return 'abstract-socket'
  if (BSD_FAMILY.has(platform)) return 'o-exlock'
  return 'socket-probe'
}

export class FolderInUseError extends Error {
  readonly code = 'FOLDER_IN_USE'
}

export interface FolderLock {
  readonly mechanism: LockMechanism
  /** Clears the PID note, then lets the kernel lock go. Call it after the data is flushed. */
  release(): Promise<void>
}

interface Held {
  /** Writes the PID note (through the locked descriptor when there is one); '' clears it. */
  note(text: string): void
  /** Lets the kernel lock go, leaving the note as it is. */
  unlock(): Promise<void>
}

export interface LockOptions {
  /** The socket the server will listen on; written in the note and probed by the next starter. */
  socketPath: string
  waitMs?: number
}

/** Takes the folder (which must exist) or throws FolderInUseError naming it. */
export async function lockFolder(dir: string, options: LockOptions): Promise<FolderLock> {
  const identity = folderIdentity(dir)
  if (HELD.has(identity)) throw new FolderInUseError(`data folder ${dir} is already open in this process`)
  const mechanism = lockMechanism()
  const deadline = Date.now() + (options.waitMs ?? DEFAULT_LOCK_WAIT_MS)
  let held: Held | undefined
  for (;;) {
    held =
      mechanism === 'abstract-socket'
        ? await listenAbstract(dir)
        : mechanism === 'o-exlock'
          ? openExclusive(dir)
          : noKernelLock(dir)
    if (held || Date.now() >= deadline) break
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
  if (!held)
    throw new FolderInUseError(
      `data folder ${dir} is in use by another running server${holderOf(dir)}; stop it, or give this server another folder`,
    )
  const previous = readNote(dir)
  for (const socketPath of new Set([previous.socketPath, options.socketPath])) {
    if (socketPath && (await answers(socketPath))) {
      await held.unlock()
      throw new FolderInUseError(
        `data folder ${dir} is in use by a running server listening on ${socketPath}${holderOf(dir)} (one this machine's lock cannot see, e.g. in another container); stop it, or give this server another folder`,
      )
    }
  }
  held.note(`${process.pid}\n${options.socketPath}\n`)
  HELD.add(identity)
  let released: Promise<void> | undefined
  return {
    mechanism,
    release: () =>
      (released ??= (async () => {
        held.note('')
        await held.unlock()
      })().finally(() => HELD.delete(identity))),
  }
}

/** Folders this process holds: a second open here is refused at once rather than after the wait. */
const HELD = new Set<string>()

function holderOf(dir: string): string {
  const { pid } = readNote(dir)
  return pid ? ` (process ${pid} according to ${path.join(dir, LOCK_FILE)})` : ''
}

function readNote(dir: string): { pid?: number; socketPath?: string } {
  try {
    const [pid, socketPath] = readFileSync(path.join(dir, LOCK_FILE), 'utf8').split('\n')
    return { pid: /^\d+$/.test(pid) ? Number(pid) : undefined, socketPath: socketPath || undefined }
  } catch {
    return {}
  }
}

/** Whether a server accepts connections on this Unix socket (a dead one's socket file refuses). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath)
    const done = (live: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(live)
    }
    // A full backlog (EAGAIN) or a stopped process still means someone holds it.
    const timer = setTimeout(() => done(true), PROBE_TIMEOUT_MS)
    socket.once('connect', () => done(true))
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'EAGAIN'))
  })
}

/** Device and inode: the same folder reached through another path or mount is the same folder. */
function folderIdentity(dir: string): string {
  const { dev, ino } = statSync(dir, { bigint: true })
  return `${dev}:${ino}`
}

export function abstractLockName(dir: string): string {
  return `\0hedgerow-datadir-${createHash('sha256').update(folderIdentity(dir)).digest('hex').slice(0, 40)}`
}

function writeNote(dir: string, text: string): void {
  if (text) writeFileSync(path.join(dir, LOCK_FILE), text, { mode: 0o600 })
  else rmSync(path.join(dir, LOCK_FILE), { force: true })
}

function listenAbstract(dir: string): Promise<Held | undefined> {
  const server: Server = createServer((connection) => connection.destroy())
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(undefined) : reject(error),
    )
    server.listen(abstractLockName(dir), () => {
      // The lock must not keep the process alive on its own.
      server.unref()
      resolve({
        note: (text) => writeNote(dir, text),
        unlock: () => new Promise<void>((done) => server.close(() => done())),
      })
    })
  })
}

function openExclusive(dir: string): Held | undefined {
  let fd: number
  try {
    fd = openSync(
      path.join(dir, LOCK_FILE),
      constants.O_RDWR | constants.O_CREAT | constants.O_NONBLOCK | O_EXLOCK,
      0o600,
    )
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return undefined
    throw error
  }
  return {
    // The file itself stays: removing it before closing would let a starter lock a new file while
    // this server is still closing.
    note: (text) => {
      ftruncateSync(fd, 0)
      if (text) writeSync(fd, text, 0)
    },
    unlock: async () => closeSync(fd),
  }
}

function noKernelLock(dir: string): Held {
  return { note: (text) => writeNote(dir, text), unlock: async () => undefined }
}
