import { lookupFlags, planDependencies, type DependencyPlan, type FlagLookup } from './dependencies.ts';
import { propertyNeeds, type PropertyNeeds } from './requirements.ts';
import type { FlagDefinition } from './types.ts';
import { sanitizeFlags } from './validate.ts';

/**
 * What the evaluator derives from a project's flag definitions alone: the checked flags, the
 * lookup by id and key, the dependency plan of all flags and each flag's storage needs. None of it
 * depends on the request, so a caller that serves many requests from the same definitions builds
 * it once (`prepareFlags`) and passes it with them; without it every request re-derives it
 * (copying and checking 50 flags and planning their dependencies twice per request was about a
 * tenth of a flags request's CPU).
 */
export interface PreparedFlags {
  /** The definitions this was built from: used only when the request's `flags` is this array. */
  readonly source: readonly FlagDefinition[];
  /** The definitions with malformed flags emptied (validate.ts). */
  readonly flags: readonly FlagDefinition[];
  readonly problems: ReadonlyMap<number, string>;
  readonly lookup: FlagLookup;
  /** The dependency plan of every flag (requests without `flag_keys`). */
  readonly fullPlan: DependencyPlan;
  /** The flag's property needs (requirements.ts), computed on first use. */
  needs(flag: FlagDefinition): PropertyNeeds;
}

export function prepareFlags(source: readonly FlagDefinition[]): PreparedFlags {
  const { flags, problems } = sanitizeFlags(source);
  const lookup = lookupFlags(flags);
  const needs = new Map<FlagDefinition, PropertyNeeds>();
  return {
    source,
    flags,
    problems,
    lookup,
    fullPlan: planDependencies(flags, null, lookup),
    needs(flag) {
      let found = needs.get(flag);
      if (!found) needs.set(flag, (found = propertyNeeds(flag)));
      return found;
    },
  };
}

/** The prepared definitions when they were built from `flags`, else prepared now. */
export function preparedFor(flags: readonly FlagDefinition[], prepared: PreparedFlags | null | undefined): PreparedFlags {
  return prepared && prepared.source === flags ? prepared : prepareFlags(flags);
}

/** The dependency plan of the requested keys (all flags when null). */
export function planFor(prepared: PreparedFlags, keys: readonly string[] | null): DependencyPlan {
  return keys === null ? prepared.fullPlan : planDependencies(prepared.flags, keys, prepared.lookup);
}
