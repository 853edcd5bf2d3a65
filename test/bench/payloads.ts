/**
 * The bench's payloads: capture batches (with and without person processing), single events, and
 * a project of 50 flags of mixed kinds with the users that exercise them. Deterministic (seeded),
 * so repeated runs send the same bytes; events carry no uuid, so every request stores new events
 * (the service generates a UUIDv7 per event, and the baselines do the same).
 */
export const USER_COUNT = 10_000
export const BATCH_SIZE = 100

/** A small linear congruential generator: repeatable payloads without Math.random. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const PAGES = ['/', '/pricing', '/docs', '/blog/launch', '/signup', '/app/dashboard']
const PLANS = ['free', 'pro', 'enterprise']

function pageview(distinctId: string, personless: boolean, i: number): Record<string, unknown> {
  return {
    event: '$pageview',
    distinct_id: distinctId,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    properties: {
      $current_url: `https://example.com${PAGES[i % PAGES.length]}`,
      $browser: 'Chrome',
      $os: 'Mac OS X',
      $lib: 'web',
      $lib_version: '1.200.0',
      ...(personless ? { $process_person_profile: false } : {}),
    },
  }
}

function identify(user: number, i: number): Record<string, unknown> {
  return {
    event: '$identify',
    distinct_id: `user-${user}`,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    properties: {
      $anon_distinct_id: `anon-${user}`,
      $set: { email: `user${user}@example.com`, plan: PLANS[user % 3] },
      $lib: 'web',
    },
  }
}

/** `count` batch bodies of 100 events each for POST /batch/. */
export function batchBodies(token: string, count: number, persons: boolean): string[] {
  const random = seeded(persons ? 2 : 1)
  return Array.from({ length: count }, (_, b) => {
    const batch = Array.from({ length: BATCH_SIZE }, (_, e) => {
      const user = Math.floor(random() * USER_COUNT)
      const i = b * BATCH_SIZE + e
      if (!persons) return pageview(`anon-${user}`, true, i)
      return e % 3 === 0 ? identify(user, i) : pageview(`user-${user}`, false, i)
    })
    return JSON.stringify({ api_key: token, batch })
  })
}

/**
 * `count` batch bodies of 100 events of one user each, as posthog-js sends them: pageviews with the
 * `$set_once` of the user's initial properties, so that only a user's first batch writes its person.
 */
export function onePersonBatchBodies(token: string, count: number): string[] {
  const random = seeded(5)
  return Array.from({ length: count }, (_, b) => {
    const user = `user-${Math.floor(random() * USER_COUNT)}`
    const batch = Array.from({ length: BATCH_SIZE }, (_, e) => {
      const event = pageview(user, false, b * BATCH_SIZE + e)
      return {
        ...event,
        properties: {
          ...(event.properties as object),
          $set_once: { $initial_referrer: '$direct', $initial_current_url: 'https://example.com/' },
        },
      }
    })
    return JSON.stringify({ api_key: token, batch })
  })
}

/** Single-event bodies for POST /i/v0/e/ (personless, so figure 3 measures the request path). */
export function singleBodies(token: string, count: number): string[] {
  const random = seeded(3)
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({ api_key: token, ...pageview(`anon-${Math.floor(random() * USER_COUNT)}`, true, i) }),
  )
}

export interface BenchUser {
  distinctId: string
  personProperties: Record<string, string | number>
  groups: Record<string, string>
  groupProperties: Record<string, Record<string, string | number>>
}

/** Users with every property a flag reads, so that local evaluation is never inconclusive. */
export function benchUsers(count: number): BenchUser[] {
  const random = seeded(4)
  return Array.from({ length: count }, (_, i) => {
    const n = Math.floor(random() * 1000)
    return {
      distinctId: `user-${i}`,
      personProperties: {
        email: n % 4 === 0 ? `u${i}@corp.example` : `u${i}@home.example`,
        plan: PLANS[n % 3]!,
        age: 18 + (n % 60),
        country: ['US', 'DE', 'FR', 'GB', 'JP'][n % 5]!,
        app_version: `${1 + (n % 3)}.${n % 10}.${n % 7}`,
        signup_date: new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString(),
        name: `User ${n}`,
      },
      groups: { company: `company-${n % 50}` },
      groupProperties: { company: { industry: n % 2 === 0 ? 'tech' : 'retail', size: 10 + (n % 500) } },
    }
  })
}

type Filter = { key: string; value?: unknown; operator?: string; type: string; group_type_index?: number }
const person = (key: string, operator: string, value?: unknown): Filter => ({ key, operator, value, type: 'person' })

/** One filter of every operator family our evaluator and posthog-node's both implement. */
const FILTERS: Filter[][] = [
  [person('plan', 'exact', ['pro', 'enterprise'])],
  [person('plan', 'is_not', 'free')],
  [person('email', 'icontains', 'corp.example')],
  [person('email', 'not_icontains', 'corp.example')],
  [person('email', 'regex', '^u[0-9]+@corp\\.example$')],
  [person('email', 'not_regex', 'home')],
  [person('age', 'gt', 30)],
  [person('age', 'gte', 40), person('country', 'exact', ['US', 'GB'])],
  [person('age', 'lt', 25)],
  [person('age', 'lte', 50)],
  [person('name', 'is_set', 'is_set')],
  [person('email', 'not_starts_with', 'u2')],
  [person('signup_date', 'is_date_before', '2025-01-01')],
  [person('signup_date', 'is_date_after', '2024-06-01')],
  [person('app_version', 'semver_gte', '2.0.0')],
  [person('app_version', 'semver_lt', '2.5.0')],
  [person('app_version', 'semver_tilde', '1.2.0')],
  [person('app_version', 'semver_caret', '2.0.0')],
  [person('app_version', 'semver_wildcard', '3.*')],
  [person('email', 'starts_with', 'u1')],
  [person('email', 'ends_with', 'home.example')],
]

/** 50 flags: property filters of every family, rollouts, multivariate with payloads, a cohort, a group flag, dependencies. */
export function flagDefinitions(): Record<string, unknown> {
  const flags: Array<Record<string, unknown>> = []
  const add = (filters: Record<string, unknown>) =>
    flags.push({
      id: flags.length + 1,
      key: `flag-${flags.length + 1}`,
      name: `Flag ${flags.length + 1}`,
      active: true,
      filters,
    })
  for (const [i, properties] of FILTERS.entries())
    add({ groups: [{ properties, rollout_percentage: [100, 50, 80][i % 3] }] })
  for (let i = 0; i < 8; i++)
    add({
      groups: [{ properties: [], rollout_percentage: 10 + i * 10 }],
      payloads: { true: JSON.stringify({ rollout: i }) },
    })
  for (let i = 0; i < 8; i++) {
    add({
      groups: [
        { properties: i % 2 ? FILTERS[i]! : [], rollout_percentage: 90 },
        { properties: [person('country', 'exact', 'JP')], rollout_percentage: 100, variant: 'test' },
      ],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'test', rollout_percentage: 30 },
          { key: 'holdout', rollout_percentage: 20 },
        ],
      },
      payloads: { control: '{"color":"blue"}', test: `{"color":"green","i":${i}}` },
    })
  }
  for (let i = 0; i < 4; i++)
    add({ groups: [{ properties: [{ key: '1', type: 'cohort', value: 1 }], rollout_percentage: 60 + i * 10 }] })
  for (let i = 0; i < 4; i++) {
    add({
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [
            {
              key: i % 2 ? 'industry' : 'size',
              operator: i % 2 ? 'exact' : 'gt',
              value: i % 2 ? 'tech' : 100,
              type: 'group',
              group_type_index: 0,
            },
          ],
          rollout_percentage: 75,
        },
      ],
    })
  }
  for (let i = 0; i < 5; i++)
    add({
      groups: [
        {
          properties: [{ key: String(1 + i), type: 'flag', operator: 'flag_evaluates_to', value: true }],
          rollout_percentage: 100,
        },
      ],
    })
  if (flags.length !== 50) throw new Error(`expected 50 flags, built ${flags.length}`)
  return {
    flags,
    group_type_mapping: { 0: 'company' },
    cohorts: {
      1: {
        type: 'OR',
        values: [{ type: 'AND', values: [person('email', 'icontains', 'corp.example'), person('age', 'gte', 21)] }],
      },
    },
  }
}

/** POST /flags/?v=2 bodies for `users`. */
export function flagsBodies(token: string, users: BenchUser[]): string[] {
  return users.map((u) =>
    JSON.stringify({
      token,
      distinct_id: u.distinctId,
      person_properties: u.personProperties,
      groups: u.groups,
      group_properties: u.groupProperties,
    }),
  )
}
