/**
 * The admin API key: from config or env when set; otherwise generated once on first start and kept
 * in the data folder (mode 0600), so there is never a built-in default key.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { redactInLogs } from '../logger.ts'

export interface AdminKey {
  readonly key: string
  /** True when this start generated the key; the caller logs it once. */
  readonly generated: boolean
  readonly file?: string
}

/** The admin key, registered for redaction so that no log line carries it (except the generated key's one showing). */
export function resolveAdminKey(configured: string | undefined, dataDir: string): AdminKey {
  const resolved = readOrCreateAdminKey(configured, dataDir)
  redactInLogs(resolved.key)
  return resolved
}

function readOrCreateAdminKey(configured: string | undefined, dataDir: string): AdminKey {
  if (configured) return { key: configured, generated: false }
  const file = path.join(dataDir, 'admin-api-key')
  if (existsSync(file)) return { key: readFileSync(file, 'utf8').trim(), generated: false, file }
  mkdirSync(dataDir, { recursive: true })
  const key = `hra_${randomBytes(24).toString('base64url')}`
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
  return { key, generated: true, file }
}

/** Constant-time comparison of two keys of any length (hashing equalises the lengths). */
export function keysEqual(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return match?.[1]
}
