import { matchProperty } from '../../../../../plugins/decide/evaluator/properties/match-property.ts'
import type { Properties } from '../../../../../plugins/decide/evaluator/types.ts'

export const UTC_NOON = Date.parse('2024-06-15T12:00:00Z')

/** matchProperty for a person filter on key "key", in UTC at a fixed now unless told. */
export function matches(
  operator: string | null | undefined,
  value: unknown,
  properties: Properties,
  options: { timeZone?: string; now?: number } = {},
): boolean {
  return matchProperty({ key: 'key', value, operator, type: 'person' }, properties, {
    timeZone: options.timeZone ?? 'UTC',
    nowMillis: options.now ?? UTC_NOON,
  })
}
