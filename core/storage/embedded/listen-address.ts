/**
 * Where the embedded server listens: a Unix socket inside the data folder, so that only the
 * folder's owner (0700) can connect — the server has no authentication of its own, and the data
 * holds every project's secret key. TCP only when asked for (the standalone server for tools).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** The driver takes a host ending in ".sock" as a socket path. */
export const SOCKET_FILE = 'mongod.sock'

/** sun_path: 108 bytes on Linux, 104 on macOS and the BSDs, the terminating NUL included. */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === 'linux' ? 107 : 103
}

export interface SocketPlace {
  readonly path: string
  /** Removes a socket file left by a server that died: only while holding the folder's lock. */
  removeStale(): void
  /** Removes the private folder of the fallback (closing the server removes the socket itself). */
  dispose(): void
}

/**
 * `<dataDir>/mongod.sock`, or, when that path is too long for a socket, `mongod.sock` in a new
 * private (0700) folder under the system's temporary folder.
 */
export function socketPlace(dataDir: string): SocketPlace {
  const inFolder = path.join(dataDir, SOCKET_FILE)
  const max = maxSocketPathBytes()
  if (Buffer.byteLength(inFolder) <= max)
    return { path: inFolder, removeStale: () => rmSync(inFolder, { force: true }), dispose: () => undefined }
  const privateFolder = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-mongo-'))
  const fallback = path.join(privateFolder, SOCKET_FILE)
  const dispose = () => rmSync(privateFolder, { recursive: true, force: true })
  if (Buffer.byteLength(fallback) > max) {
    dispose()
    throw new Error(
      `neither ${inFolder} nor ${fallback} fits in a Unix socket path (${max} bytes): use a shorter data folder path or TMPDIR`,
    )
  }
  return { path: fallback, removeStale: () => undefined, dispose }
}

export function socketUrl(socketPath: string, replSetName?: string): string {
  return `mongodb://${encodeURIComponent(socketPath)}/?directConnection=true${replicaSet(replSetName)}`
}

/** host:port, an IPv6 host in brackets. */
export function tcpAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

export function tcpUrl(host: string, port: number, replSetName?: string): string {
  return `mongodb://${tcpAddress(host, port)}/?directConnection=true${replicaSet(replSetName)}`
}

const replicaSet = (name: string | undefined) => (name ? `&replicaSet=${encodeURIComponent(name)}` : '')
