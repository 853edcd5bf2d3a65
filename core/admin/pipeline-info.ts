/**
 * `GET /api/pipeline`: the plugins in their configured order, the hooks each tapped (in the
 * engine's resolved order), their options with secrets masked, and their error counts.
 */
import type { LoadedPlugin } from '../loader.ts'
import type { TapOrder } from '../engine.ts'
import { PHASES } from '../hooks.ts'
import { counterSumBy } from '../metrics.ts'

export const MASK = '********'
/** Option names that hold credentials: their values are never shown. */
const SECRET_NAME = /key|token|secret|pass|credential/i

/**
 * The value with the strings under every secret-named field masked (numbers and booleans, such
 * as `maxKeys`, are settings, not secrets) and every URL's user and password hidden.
 */
export function maskSecrets(value: unknown, secret = false): unknown {
  if (typeof value === 'string') return secret && value !== '' ? MASK : maskUrl(value)
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, secret))
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, maskSecrets(item, secret || SECRET_NAME.test(key))]),
    )
  return value
}

/** `scheme://user:pass@host` → `scheme://********:********@host`; anything else as it is. */
function maskUrl(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#@\s]*)@/gi,
    (_all, scheme: string, userinfo: string) => `${scheme}${userinfo.includes(':') ? `${MASK}:${MASK}` : MASK}@`,
  )
}

export interface PipelineSources {
  readonly plugins: readonly LoadedPlugin[]
  readonly order: TapOrder
}

export function pipelineJson({ plugins, order }: PipelineSources) {
  const stepErrors = counterSumBy('hedgerow_plugin_errors_total', 'plugin')
  const sinkErrors = counterSumBy('hedgerow_sink_errors_total', 'plugin')
  const hooks = PHASES.map((phase) => ({
    hook: phase.hook,
    kind: phase.kind,
    policy: phase.policy,
    plugins: [...order[phase.hook]],
  }))
  return {
    plugins: plugins.map((plugin, index) => ({
      position: index + 1,
      id: plugin.id,
      source: plugin.source,
      required: plugin.required ?? false,
      hooks: hooks
        .filter((hook) => hook.plugins.includes(plugin.id))
        .map((hook) => ({ hook: hook.hook, position: hook.plugins.indexOf(plugin.id) + 1, of: hook.plugins.length })),
      options: maskSecrets(plugin.options ?? {}),
      errors: (stepErrors.get(plugin.id) ?? 0) + (sinkErrors.get(plugin.id) ?? 0),
    })),
    hooks,
  }
}
