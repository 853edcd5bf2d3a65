/**
 * CPU time of the calling thread, in milliseconds, to tell a match that really backtracked from
 * one whose thread was descheduled. `process.cpuUsage()` counts every thread of the process: the
 * embedded database's worker thread and V8's helpers ran while the matching thread waited, so a
 * benign pattern on a loaded machine looked busy and was failed. Linux reports each thread's
 * time on the CPU in nanoseconds in /proc/thread-self/schedstat; elsewhere the process's time is
 * the best there is. Read only after a match timed out, never on the hot path.
 */
import { readFileSync } from 'node:fs'

const SCHEDSTAT = '/proc/thread-self/schedstat'

function fromSchedstat(): number | null {
  try {
    const nanoseconds = Number(readFileSync(SCHEDSTAT, 'latin1').split(' ', 1)[0])
    return Number.isFinite(nanoseconds) ? nanoseconds / 1e6 : null
  } catch {
    return null
  }
}

const perThread = fromSchedstat() !== null

export function threadCpuMillis(): number {
  if (perThread) {
    const ms = fromSchedstat()
    if (ms !== null) return ms
  }
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}
