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

/** An admin key and the name the audit log records for the changes made with it. */
export interface LabelledKey {
  readonly label: string
  readonly key: string
}

/** The label of the single admin key when the config gives it none. */
export const DEFAULT_KEY_LABEL = 'admin'

/**
 * Every admin key with its label: the primary key (`admin.apiKey` or the generated one) and the
 * labelled `admin.keys`. Labels and keys must be distinct, so that a record names one key.
 */
export function adminKeyring(primary: LabelledKey, extra: readonly LabelledKey[] = []): LabelledKey[] {
  const keys = [primary, ...extra]
  for (const [index, entry] of keys.entries()) {
    const earlier = keys.slice(0, index)
    if (earlier.some((other) => other.label === entry.label))
      throw new Error(`admin keys: the label "${entry.label}" is given to two keys`)
    if (earlier.some((other) => other.key === entry.key))
      throw new Error(`admin keys: the key labelled "${entry.label}" is also another label's key`)
    redactInLogs(entry.key)
  }
  return keys
}

/** The label of the admin key `token` is, or undefined; every key is compared (constant time each). */
export function keyLabel(token: string, keys: readonly LabelledKey[]): string | undefined {
  let found: string | undefined
  for (const entry of keys) if (keysEqual(token, entry.key) && found === undefined) found = entry.label
  return found
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return match?.[1]
}
