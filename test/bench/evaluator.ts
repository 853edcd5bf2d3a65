/**
 * Figure 5: our pure evaluator against posthog-node's local evaluator, in this process, on the same
 * definitions (both read from the service's `GET /flags/definitions`: posthog-node fetches them
 * itself with the project's secret key as `personalApiKey`) and the same users. Every user's value
 * of every flag must be equal; a mismatch is printed and fails the run. Rates are users per CPU
 * second of this process, the two sides timed in alternating slices of the users.
 */
import { PostHog } from 'posthog-node'
import { evaluateFlags, prepareFlags } from '../../plugins/decide/evaluator/index.ts'
import type { PreparedFlags } from '../../plugins/decide/evaluator/index.ts'
import type { BenchUser } from './payloads.ts'
import { sdkDefinitions } from './flags.ts'
import type { SdkDefinitions } from './flags.ts'

type Values = Record<string, string | boolean>

export interface EvaluatorFigure {
  oursPerSecond: number
  posthogNodePerSecond: number
  flagsPerUser: number
  mismatches: string[]
}

function ours(definitions: SdkDefinitions, prepared: PreparedFlags, user: BenchUser, now: number): Values {
  const result = evaluateFlags({
    flags: definitions.flags,
    prepared,
    cohorts: definitions.cohorts,
    groupTypeMapping: definitions.group_type_mapping,
    distinctId: user.distinctId,
    personPropertyOverrides: user.personProperties,
    groups: user.groups,
    groupPropertyOverrides: user.groupProperties,
    database: {
      status: 'loaded',
      person: { properties: user.personProperties },
      groupProperties: { 0: user.groupProperties.company! },
    },
    now,
  })
  const values: Values = {}
  for (const [key, flag] of Object.entries(result.flags)) values[key] = flag.enabled ? (flag.variant ?? true) : false
  return values
}

/** CPU seconds of this process: on a shared machine steadier than wall time, and both sides run here. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

async function timed<T>(
  users: readonly BenchUser[],
  run: (user: BenchUser) => T | Promise<T>,
  values: T[],
): Promise<number> {
  const started = cpuSeconds()
  for (const user of users) values.push(await run(user))
  return cpuSeconds() - started
}

/** Slices of users, ours and posthog-node's in turn, so that a neighbour's burst falls on both sides. */
const SLICES = 10

export async function evaluatorFigure(
  serviceUrl: string,
  token: string,
  secretKey: string,
  users: readonly BenchUser[],
): Promise<EvaluatorFigure> {
  const definitions = await sdkDefinitions(serviceUrl, token, secretKey)
  const sdk = new PostHog(token, {
    host: serviceUrl,
    personalApiKey: secretKey,
    featureFlagsPollingInterval: 600_000,
    flushAt: 1000,
    flushInterval: 0,
    fetchRetryCount: 0,
  })
  try {
    if (!(await sdk.waitForLocalEvaluationReady(10_000))) throw new Error('posthog-node did not load the definitions')
    const now = Date.now()
    // prepared (and compiled) once, as the service does per definitions version and posthog-node per poll
    const prepared = prepareFlags(definitions.flags)
    const viaSdk = (user: BenchUser) =>
      sdk.getAllFlags(user.distinctId, {
        personProperties: user.personProperties,
        groups: user.groups,
        groupProperties: user.groupProperties,
        onlyEvaluateLocally: true,
      }) as Promise<Values>
    const viaOurs = (user: BenchUser) => ours(definitions, prepared, user, now)
    // warm both up (JIT) before timing
    await timed(users.slice(0, 500), viaOurs, [])
    await timed(users.slice(0, 500), viaSdk, [])
    const mineAll: Values[] = []
    const theirsAll: Values[] = []
    let oursSeconds = 0
    let sdkSeconds = 0
    const size = Math.ceil(users.length / SLICES)
    for (let start = 0; start < users.length; start += size) {
      const slice = users.slice(start, start + size)
      oursSeconds += await timed(slice, viaOurs, mineAll)
      sdkSeconds += await timed(slice, viaSdk, theirsAll)
    }
    const mismatches: string[] = []
    users.forEach((user, i) => {
      const mine = mineAll[i]!
      const theirs = theirsAll[i]!
      for (const key of new Set([...Object.keys(mine), ...Object.keys(theirs)])) {
        if (mine[key] !== theirs[key])
          mismatches.push(
            `${user.distinctId} ${key}: ours ${JSON.stringify(mine[key])}, posthog-node ${JSON.stringify(theirs[key])}`,
          )
      }
    })
    return {
      oursPerSecond: users.length / oursSeconds,
      posthogNodePerSecond: users.length / sdkSeconds,
      flagsPerUser: definitions.flags.length,
      mismatches,
    }
  } finally {
    await sdk.shutdown()
  }
}
