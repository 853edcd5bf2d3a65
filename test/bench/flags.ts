/**
 * Figure 4's setup: the flags users get stored persons (an `$identify` with their properties as
 * `$set`, through the service's own capture), so every flags request reads a person as in
 * production, whichever figures ran before (figure 2's persons are other users' and absent when
 * it does not run).
 */
import type { BenchUser } from './payloads.ts'

export async function storeFlagsPersons(serviceUrl: string, token: string, users: readonly BenchUser[]): Promise<void> {
  for (let start = 0; start < users.length; start += 100) {
    const batch = users.slice(start, start + 100).map((u) => ({ event: '$identify', distinct_id: u.distinctId, properties: { $set: u.personProperties } }))
    const response = await fetch(`${serviceUrl}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) })
    if (response.status !== 200) throw new Error(`POST /batch/ of the flags users' persons answered ${response.status}: ${await response.text()}`)
  }
}
