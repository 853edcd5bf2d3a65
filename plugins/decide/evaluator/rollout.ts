import type { Variant } from './types.ts'

/** A null rollout means 100 on the server; 100 short-circuits without hashing (§2). */
export function isFullRollout(rolloutPercentage: number | null | undefined): boolean {
  return (rolloutPercentage ?? 100) === 100
}

/** In the rollout when `hash ≤ rollout / 100`: note the ≤, and fractional percentages are kept. */
export function isInRollout(hash: number, rolloutPercentage: number): boolean {
  return hash <= rolloutPercentage / 100
}

/**
 * Walks the variants in stored order adding each weight to a running sum; the
 * first with `hash < sum` wins. Weights summing under 100 leave a gap with no
 * variant (the flag is then plain `true`).
 */
export function selectVariant(variants: readonly Variant[], variantHash: number): string | null {
  let cumulative = 0
  for (const variant of variants) {
    cumulative += variant.rollout_percentage / 100
    if (variantHash < cumulative) return variant.key
  }
  return null
}
