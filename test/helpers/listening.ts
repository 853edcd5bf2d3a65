/**
 * What a process listens on over TCP, read from Linux's /proc (the sockets among its descriptors
 * that the kernel's TCP tables show in state LISTEN). Undefined where there is no /proc.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'

const LISTEN = '0A'

export function tcpListeningPorts(pid: number): number[] | undefined {
  if (!existsSync(`/proc/${pid}/net/tcp`)) return undefined
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1])
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = []
  for (const table of ['tcp', 'tcp6']) {
    const file = `/proc/${pid}/net/${table}`
    if (!existsSync(file)) continue
    for (const row of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const columns = row.trim().split(/\s+/)
      const [, local, , state] = columns
      if (state === LISTEN && inodes.has(columns[9])) ports.push(parseInt(local.split(':')[1], 16))
    }
  }
  return ports.sort((a, b) => a - b)
}
