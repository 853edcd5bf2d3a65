/**
 * One TypeBox engine for boot-time config checks and request validation: schemas are compiled
 * once, and a failure is reported as the first offending JSON path with a readable reason.
 */
import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Value } from 'typebox/value'

type Validator = ReturnType<typeof Compile>
const compiled = new WeakMap<TSchema, Validator>()

function validatorOf(schema: TSchema): Validator {
  let validator = compiled.get(schema)
  if (!validator) compiled.set(schema, (validator = Compile(schema)))
  return validator
}

export type Checked<T> = { ok: true; value: T } | { ok: false; path: string; reason: string }

/** Checks `value` (after applying the schema's defaults to a copy when `withDefaults`). */
export function check<S extends TSchema>(schema: S, value: unknown, withDefaults = false): Checked<Static<S>> {
  const candidate = withDefaults ? Value.Default(schema, Value.Clone(value)) : value
  const validator = validatorOf(schema)
  if (validator.Check(candidate)) return { ok: true, value: candidate as Static<S> }
  const errors = [...validator.Errors(candidate)]
  // an unknown key is reported twice (a `false` schema and the keyword); the first names the key
  const first = errors.find((e) => e.keyword !== 'additionalProperties') ?? errors[0]
  const missing =
    first?.keyword === 'required'
      ? (first.params as { requiredProperties?: string[] }).requiredProperties?.[0]
      : undefined
  if (missing !== undefined) return { ok: false, path: `${first.instancePath}/${missing}`, reason: 'is required' }
  const reason =
    first?.keyword === 'boolean'
      ? 'unknown key'
      : first?.keyword === 'const' || first?.keyword === 'anyOf'
        ? 'is not one of the allowed values'
        : (first?.message ?? 'invalid')
  return { ok: false, path: first?.instancePath ?? '', reason }
}
