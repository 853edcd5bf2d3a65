import type { FlagDefinition } from './types.ts'

/**
 * Which flags a request evaluates at all (§3 step 0, §12). Excluded flags are
 * absent from the response but count as `false` for flags depending on them.
 */

export type EvaluationRuntime = 'all' | 'client' | 'server'

export interface RequestFilters {
  runtime?: EvaluationRuntime | null
  evaluationContexts?: readonly string[] | null
  onlySurveyFlags?: boolean
}

export const SURVEY_TARGETING_PREFIX = 'survey-targeting-'

/** Unknown runtime names on a flag read as "all", as the server's `EvaluationRuntime::from`. */
function flagRuntime(flag: FlagDefinition): EvaluationRuntime | null {
  const raw = flag.evaluation_runtime
  if (raw === null || raw === undefined) return null
  const lower = raw.toLowerCase()
  return lower === 'client' || lower === 'server' ? lower : 'all'
}

function runtimeAllows(flag: FlagDefinition, runtime: EvaluationRuntime | null): boolean {
  if (runtime === 'all') return true
  const required = flagRuntime(flag)
  if (required === null || required === 'all') return true
  // When the requester's runtime cannot be told, only runtime-agnostic flags are evaluated.
  return runtime !== null && required === runtime
}

function contextsAllow(flag: FlagDefinition, contexts: readonly string[] | null | undefined): boolean {
  if (!contexts || contexts.length === 0) return true
  const tags = flag.evaluation_contexts ?? flag.evaluation_tags
  if (!tags || tags.length === 0) return true
  return tags.some((tag) => contexts.includes(tag))
}

export function isFlagExcluded(flag: FlagDefinition, filters: RequestFilters): boolean {
  if (!flag.active || flag.deleted) return true
  if (filters.onlySurveyFlags && !flag.key.startsWith(SURVEY_TARGETING_PREFIX)) return true
  return !runtimeAllows(flag, filters.runtime ?? null) || !contextsAllow(flag, filters.evaluationContexts)
}

const BROWSER_AGENTS = ['Mozilla/', 'Chrome/', 'Safari/', 'Firefox/', 'Edge/']
const SERVER_AGENT_PREFIXES = [
  'posthog-python/',
  'posthog-ruby/',
  'posthog-php/',
  'posthog-java/',
  'posthog-go/',
  'posthog-node/',
  'posthog-dotnet/',
  'posthog-elixir/',
]
const MOBILE_AGENT_PREFIXES = ['posthog-android/', 'posthog-ios/', 'posthog-react-native/', 'posthog-flutter/']

/**
 * The requester's runtime as the server guesses it: the explicit
 * `evaluation_runtime` field, else the user agent, else browser-only headers.
 * Header names must be lower case. Null when it cannot be told.
 */
export function detectEvaluationRuntime(
  headers: Record<string, string | undefined>,
  explicit?: string | null,
): EvaluationRuntime | null {
  if (explicit) {
    const lower = explicit.toLowerCase()
    return lower === 'client' || lower === 'server' ? lower : 'all'
  }
  const agent = headers['user-agent']
  if (agent) {
    if (BROWSER_AGENTS.some((marker) => agent.includes(marker))) return 'client'
    if (SERVER_AGENT_PREFIXES.some((prefix) => agent.startsWith(prefix))) return 'server'
    if (agent.includes('python-requests/') || agent.includes('curl/')) return 'server'
    if (MOBILE_AGENT_PREFIXES.some((prefix) => agent.startsWith(prefix))) return 'client'
  }
  if (headers.origin || headers.referer || headers['sec-fetch-mode'] || headers['sec-fetch-site']) return 'client'
  return null
}
