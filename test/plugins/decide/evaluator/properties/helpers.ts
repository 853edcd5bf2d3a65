import { expect } from 'chai'
import {
  compileProperty,
  type CompiledProperty,
} from '../../../../../plugins/decide/evaluator/properties/compiled-property.ts'
import { matchProperty } from '../../../../../plugins/decide/evaluator/properties/match-property.ts'
import type { Properties, PropertyFilter } from '../../../../../plugins/decide/evaluator/types.ts'

export const UTC_NOON = Date.parse('2024-06-15T12:00:00Z')

/**
 * One compiled filter per operator and value for the whole run, as compiled flags keep theirs
 * across requests: the tests' zones and times then reach the matchers' remembered filter sides.
 */
const compiled = new Map<string, CompiledProperty>()

function compiledFor(filter: PropertyFilter): CompiledProperty {
  const id = JSON.stringify([filter.operator, filter.value])
  let found = compiled.get(id)
  if (found === undefined) compiled.set(id, (found = compileProperty(filter)))
  return found
}

/**
 * matchProperty for a person filter on key "key", in UTC at a fixed now unless told; the compiled
 * filter (compiled-property.ts) must answer the same.
 */
export function matches(
  operator: string | null | undefined,
  value: unknown,
  properties: Properties,
  options: { timeZone?: string; now?: number } = {},
): boolean {
  const filter: PropertyFilter = { key: 'key', value, operator, type: 'person' }
  const match = { timeZone: options.timeZone ?? 'UTC', nowMillis: options.now ?? UTC_NOON }
  const interpreted = matchProperty(filter, properties, match)
  expect(compiledFor(filter).matches(properties, match), `compiled ${operator} ${JSON.stringify(value)}`).to.equal(
    interpreted,
  )
  return interpreted
}
