/**
 * Figure 4's setup: the flags users get stored persons (an `$identify` with their properties as
 * `$set`, through the service's own capture), so every flags request reads a person as in
 * production, whichever figures ran before (figure 2's persons are other users' and absent when
 * it does not run). Also the project's definitions as SDKs load them (figures 4's ceiling and 5),
 * and a check that two endpoints answer the same flag values.
 */
import type { EvaluationInput } from '../../plugins/decide/evaluator/index.ts'
import type { BenchUser } from './payloads.ts'

export async function storeFlagsPersons(serviceUrl: string, token: string, users: readonly BenchUser[]): Promise<void> {
  for (let start = 0; start < users.length; start += 100) {
    const batch = users
      .slice(start, start + 100)
      .map((u) => ({ event: '$identify', distinct_id: u.distinctId, properties: { $set: u.personProperties } }))
    const response = await fetch(`${serviceUrl}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, batch }),
    })
    if (response.status !== 200)
      throw new Error(`POST /batch/ of the flags users' persons answered ${response.status}: ${await response.text()}`)
  }
}

/** What `GET /flags/definitions?send_cohorts` answers (our evaluator reads this format too). */
export interface SdkDefinitions {
  flags: EvaluationInput['flags']
  group_type_mapping: Record<string, string>
  cohorts: EvaluationInput['cohorts']
}

/** The project's definitions as the local-evaluation SDKs load them, with its secret key. */
export async function sdkDefinitions(serviceUrl: string, token: string, secretKey: string): Promise<SdkDefinitions> {
  const response = await fetch(`${serviceUrl}/flags/definitions?token=${encodeURIComponent(token)}&send_cohorts`, {
    headers: { Authorization: `Bearer ${secretKey}` },
  })
  if (!response.ok) throw new Error(`/flags/definitions answered ${response.status}`)
  return (await response.json()) as SdkDefinitions
}

/** Flag key → value (variant, true or false) of a `/flags/?v=2` answer. */
async function flagValues(url: string, body: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`)
  const { flags } = (await response.json()) as { flags: Record<string, { enabled: boolean; variant?: string | null }> }
  return Object.fromEntries(
    Object.entries(flags).map(([key, flag]) => [key, flag.enabled ? (flag.variant ?? true) : false]),
  )
}

/** Throws unless both endpoints give every body the same values of the same flags. */
export async function assertSameFlagValues(urlA: string, urlB: string, bodies: readonly string[]): Promise<void> {
  for (const body of bodies) {
    const [a, b] = [JSON.stringify(await flagValues(urlA, body)), JSON.stringify(await flagValues(urlB, body))]
    if (a !== b) throw new Error(`${urlA} and ${urlB} disagree for ${body}:\n${a}\n${b}`)
  }
}
