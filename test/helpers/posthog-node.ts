/**
 * The real posthog-node against a test service, twice: `remote` asks /flags, `local` evaluates the
 * project's definitions itself (the secret key as personalApiKey), ready before tests run.
 */
import { PostHog } from 'posthog-node'
import type { TestService } from './service.ts'

export interface PosthogNodePair {
  remote: PostHog
  local: PostHog
  shutdown(): Promise<void>
}

export async function posthogNodePair(t: TestService): Promise<PosthogNodePair> {
  const common = { host: t.url, flushAt: 500, flushInterval: 0, fetchRetryCount: 0 }
  const remote = new PostHog(t.project.api_token, common)
  const local = new PostHog(t.project.api_token, {
    ...common,
    personalApiKey: t.project.secret_api_token,
    featureFlagsPollingInterval: 60_000,
  })
  if (!(await local.waitForLocalEvaluationReady(5000)))
    throw new Error('posthog-node did not load the local-evaluation definitions within 5 s')
  return { remote, local, shutdown: async () => void (await Promise.all([remote.shutdown(), local.shutdown()])) }
}
