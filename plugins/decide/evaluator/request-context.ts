import { indexCohorts, staticMembershipFor } from './cohorts.ts';
import type { RequestContext } from './context.ts';
import type { FlagLookup } from './dependencies.ts';
import { mergePersonProperties } from './person-properties.ts';
import { formatNumber } from './properties/values.ts';
import type { EvaluationInput, Properties } from './types.ts';

/** Resolves the request's groups through the group-type mapping (§5.1). */
function groupResolver(input: EvaluationInput) {
  const mapping = input.groupTypeMappingFailed ? null : (input.groupTypeMapping ?? null);
  const typeName = (index: number): string | undefined => mapping?.[String(index)];
  const stored = input.database.status === 'loaded' ? (input.database.groupProperties ?? {}) : {};

  const groupKey = (index: number) => {
    const name = typeName(index);
    const raw = name === undefined ? undefined : input.groups?.[name];
    if (typeof raw === 'string') return { text: raw, usable: raw !== '' };
    if (typeof raw === 'number') return { text: formatNumber(raw), usable: true };
    // Any other value hashes as "" (kept for parity with the older service), and is not usable.
    return { text: '', usable: false };
  };
  const groupProperties = (index: number): Properties => {
    const name = typeName(index);
    const overrides = name === undefined ? undefined : input.groupPropertyOverrides?.[name];
    return { ...(stored[index] ?? {}), ...(overrides ?? {}) };
  };
  return { groupKey, groupProperties };
}

/** The request's device id, else a non-empty `$device_id` among the person property overrides (§4.4). */
export function requestDeviceId(input: Pick<EvaluationInput, 'deviceId' | 'personPropertyOverrides'>): string | null {
  if (input.deviceId) return input.deviceId;
  const fromProperties = input.personPropertyOverrides?.$device_id;
  return typeof fromProperties === 'string' && fromProperties !== '' ? fromProperties : null;
}

export function buildRequestContext(
  input: EvaluationInput,
  lookup: FlagLookup,
  distinctId: string,
  timeZone: string,
  nowMillis: number,
): RequestContext {
  const database = input.database;
  const loaded = database.status === 'loaded';
  const person = mergePersonProperties(loaded ? database.person : undefined, input.personPropertyOverrides, distinctId);
  const match = { timeZone, nowMillis };
  let cohorts: RequestContext['cohorts'] = null;
  if (loaded) {
    const index = indexCohorts(input.cohorts);
    const memberOf = database.person === null ? null : (database.staticCohortIds ?? []);
    cohorts = { cohorts: index, staticMembership: staticMembershipFor(index, memberOf), match, known: { person, members: new Map() } };
  }
  return {
    lookup,
    distinctId,
    deviceId: requestDeviceId(input),
    anonDistinctId: input.anonDistinctId ?? null,
    person,
    ...groupResolver(input),
    hashKeyOverrides: input.hashKeyOverrides ?? null,
    cohorts,
    match,
    results: new Map(),
  };
}
