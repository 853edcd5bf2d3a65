/**
 * Figure `persons_search`: the admin API's person search among 100,000 persons on the embedded
 * store, against a single `?distinct_id=` lookup. The persons are inserted straight into the
 * database the service uses (its search indexes exist from its start), then one client sends
 * searches and lookups one at a time, alternating, so that both see the same machine.
 */
import type { Db } from 'mongodb'

export const PERSONS = 100_000
const INSERT_BATCH = 5_000

export interface LatencyStats {
  count: number
  p50: number
  p99: number
}

export interface PersonsSearchFigure {
  search: LatencyStats
  lookup: LatencyStats
  /** Persons listed per search page, on average. */
  meanResults: number
}

/** Persons bench-person-0 … with emails bench<i>@example.test and names "Bench <i>", in project `projectId`. */
export async function insertBenchPersons(db: Db, projectId: number): Promise<void> {
  const createdAt = new Date()
  for (let start = 0; start < PERSONS; start += INSERT_BATCH) {
    const range = Array.from({ length: Math.min(INSERT_BATCH, PERSONS - start) }, (_, k) => start + k)
    await db.collection('persons').insertMany(
      range.map((i) => ({
        project_id: projectId,
        id: `bench-person-${i}`,
        properties: { email: `bench${i}@example.test`, name: `Bench ${i}`, plan: i % 3 ? 'free' : 'pro' },
        is_identified: true,
        created_at: createdAt,
        version: 0,
      })),
      { ordered: false },
    )
    await db.collection('person_distinct_ids').insertMany(
      range.map((i) => ({
        project_id: projectId,
        distinct_id: `bench-id-${i}`,
        person_id: `bench-person-${i}`,
        version: 0,
      })),
      { ordered: false },
    )
  }
}

/** The searches: email prefixes with from 1 to 11,111 matches, distinct id prefixes, and exact emails. */
function searchPath(projectId: number, n: number): string {
  const k = 1 + ((n * 7919) % (PERSONS - 1))
  const base = `/api/projects/${projectId}/persons`
  switch (n % 4) {
    case 0:
      return `${base}?search=bench${k}`
    case 1:
      return `${base}?search=bench${k % 100}`
    case 2:
      return `${base}?search=bench-id-${k % 1000}`
    default:
      return `${base}?property=email&value=${encodeURIComponent(`bench${k}@example.test`)}`
  }
}

function stats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100
  return { count: sorted.length, p50: at(0.5), p99: at(0.99) }
}

export async function personsSearchFigure(
  serviceUrl: string,
  adminKey: string,
  projectId: number,
  seconds: number,
): Promise<PersonsSearchFigure> {
  const headers = { Authorization: `Bearer ${adminKey}` }
  const timed = async (p: string): Promise<{ ms: number; body: { results?: unknown[] } }> => {
    const started = performance.now()
    const response = await fetch(serviceUrl + p, { headers })
    const body = (await response.json()) as { results?: unknown[] }
    const ms = performance.now() - started
    if (response.status !== 200) throw new Error(`GET ${p} answered ${response.status}: ${JSON.stringify(body)}`)
    return { ms, body }
  }
  // warm-up: the service's and the database's first requests are not what an operator waits for
  for (let n = 0; n < 50; n++) {
    await timed(searchPath(projectId, n))
    await timed(`/api/projects/${projectId}/persons?distinct_id=bench-id-${n}`)
  }
  const search: number[] = []
  const lookup: number[] = []
  let results = 0
  const until = performance.now() + seconds * 1000
  for (let n = 0; performance.now() < until; n++) {
    const found = await timed(searchPath(projectId, n))
    search.push(found.ms)
    results += found.body.results?.length ?? 0
    lookup.push((await timed(`/api/projects/${projectId}/persons?distinct_id=bench-id-${(n * 7919) % PERSONS}`)).ms)
  }
  return { search: stats(search), lookup: stats(lookup), meanResults: results / search.length }
}
