/**
 * The JSON text of a /flags or /decide answer: exactly `JSON.stringify` of the object
 * responses.ts builds, but for the per-flag shapes (v2, v3) each answered flag's record text is
 * remembered by its outcome. A project's flags have few outcomes (a variant, a reason and the
 * condition index), so requests mostly repeat texts already made: serialising 50 records per
 * request was a tenth of a flags request's CPU.
 */
import type { EvaluationResult, FlagResult } from '../evaluator/index.ts'
import { flagRecord, flagsResponse } from './responses.ts'
import type { FlagsBodyParts, ResponseShape } from './responses.ts'

interface Remembered {
  flag: FlagResult
  text: string
}

/** Outcome texts kept per flag key and shape (newest first), and flag keys kept per process; the oldest go past these. */
const PER_KEY = 16
const MAX_KEYS = 20_000
const remembered = { v2: new Map<string, Remembered[]>(), v3: new Map<string, Remembered[]>() }

/** Whether two answers serialise to the same record (payloads compared by identity: they come from the cached definitions). */
function sameOutcome(a: FlagResult, b: FlagResult): boolean {
  return (
    a.key === b.key &&
    a.enabled === b.enabled &&
    a.variant === b.variant &&
    a.failed === b.failed &&
    a.reason.code === b.reason.code &&
    a.reason.condition_index === b.reason.condition_index &&
    a.reason.description === b.reason.description &&
    a.metadata.id === b.metadata.id &&
    a.metadata.version === b.metadata.version &&
    a.metadata.description === b.metadata.description &&
    a.metadata.payload === b.metadata.payload
  )
}

/** `"key":{record}`, from the remembered texts of the flag's key when one has the same outcome. */
function recordText(shape: 'v2' | 'v3', flag: FlagResult): string {
  if (flag.failed) return `${JSON.stringify(flag.key)}:${JSON.stringify(flagRecord(shape, flag))}`
  const byKey = remembered[shape]
  let list = byKey.get(flag.key)
  if (list) for (const entry of list) if (sameOutcome(entry.flag, flag)) return entry.text
  const text = `${JSON.stringify(flag.key)}:${JSON.stringify(flagRecord(shape, flag))}`
  if (!list) {
    if (byKey.size >= MAX_KEYS) byKey.delete(byKey.keys().next().value as string)
    byKey.set(flag.key, (list = []))
  }
  list.unshift({ flag, text })
  if (list.length > PER_KEY) list.pop()
  return text
}

const FLAGS_PLACEHOLDER = 'hedgerow:flags-records'

/** `JSON.stringify({...fields, ...flagsResponse(shape, result, parts)})`. */
export function flagsResponseJson(fields: Record<string, unknown>, shape: ResponseShape, result: EvaluationResult, parts: FlagsBodyParts): string {
  if (shape !== 'v2' && shape !== 'v3') return JSON.stringify({ ...fields, ...flagsResponse(shape, result, parts) })
  const records: string[] = []
  // Object.values enumerates in the order JSON.stringify of the records object would (integer-like keys first)
  for (const flag of Object.values(result.flags)) records.push(recordText(shape, flag))
  const text = JSON.stringify({ ...fields, errorsWhileComputingFlags: result.errorsWhileComputingFlags, flags: FLAGS_PLACEHOLDER, ...parts })
  // only the request id and time follow the records, so the last placeholder is the records' own
  const at = text.lastIndexOf(`"${FLAGS_PLACEHOLDER}"`)
  return `${text.slice(0, at)}{${records.join(',')}}${text.slice(at + FLAGS_PLACEHOLDER.length + 2)}`
}
