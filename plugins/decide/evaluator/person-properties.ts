import { PERSON_METADATA_PREFIX } from './properties/match-property.ts';
import type { Properties } from './types.ts';

/**
 * Person properties as the server matches them (§7.1): stored properties,
 * plus `distinct_id` when the database was queried, with the request's
 * overrides merged over them key by key, then missing `$initial_*` filled in.
 */

const INITIAL_SOURCES = [
  '$app_build', '$app_name', '$app_namespace', '$app_version', '$browser', '$browser_version',
  '$device_type', '$current_url', '$pathname', '$os', '$os_version', '$referring_domain', '$referrer',
  '$screen_height', '$screen_width', '$viewport_height', '$viewport_width', '$raw_user_agent',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'gclid', 'gad_source',
  'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'twclid', 'li_fat_id', 'mc_cid',
  'igshid', 'ttclid', 'rdt_cid', 'epik', 'qclid', 'sccid', 'irclid', '_kx',
];

function initialKey(source: string): string {
  return source.startsWith('$') ? `$initial_${source.slice(1)}` : `$initial_${source}`;
}

/** Fills only missing `$initial_X` from `X`, so stored initial values survive. */
export function fillInitialProperties(properties: Properties): Properties {
  const filled = { ...properties };
  for (const source of INITIAL_SOURCES) {
    const target = initialKey(source);
    if (Object.prototype.hasOwnProperty.call(properties, source) && !Object.prototype.hasOwnProperty.call(properties, target)) {
      filled[target] = properties[source];
    }
  }
  return filled;
}

export interface StoredPerson {
  properties: Properties;
  /** The person's creation time, read by `person_metadata` filters on `created_at`. */
  created_at?: string;
}

/**
 * `stored` is undefined when the database was not queried for this request
 * (then only the overrides are used and `distinct_id` is not injected), and
 * null when it was queried and there is no such person.
 */
export function mergePersonProperties(
  stored: StoredPerson | null | undefined,
  overrides: Properties | null | undefined,
  distinctId: string,
): Properties {
  let merged: Properties = {};
  if (stored !== undefined) {
    merged = { ...(stored?.properties ?? {}) };
    if (stored?.created_at !== undefined) merged[`${PERSON_METADATA_PREFIX}created_at`] = stored.created_at;
    merged.distinct_id = distinctId;
  }
  return fillInitialProperties({ ...merged, ...(overrides ?? {}) });
}
