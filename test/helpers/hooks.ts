/** Hooks with the real registration rules, a way to tap them as a named plugin would, and the engine that runs them. */
import { pino } from 'pino'
import { createHooks } from '../../core/hooks.ts'
import type { SetupScope, TapOwner } from '../../core/hooks.ts'
import { Engine } from '../../core/engine.ts'
import type { EventContext, IngestEvent, IngestHooks, StepInfo } from '../../core/plugin-api.ts'

const logger = pino({ level: 'silent' })

export function hooksWithOwner(stepTimeoutMs = 1000): {
  hooks: IngestHooks
  scope: SetupScope
  /** Every failure the `stepFailed` observers were told of. */
  failures: StepInfo[]
  as: (id: string, fn: () => void, required?: boolean) => TapOwner
  /** The engine over the taps made so far, built as the service builds it once every setup is done. */
  engine: () => Engine
} {
  const failures: StepInfo[] = []
  const scope: SetupScope = {}
  const hooks = createHooks(scope)
  const as = (id: string, fn: () => void, required = false) => {
    const owner: TapOwner = { id, required, logger, tapped: [] }
    scope.owner = owner
    try {
      fn()
    } finally {
      scope.owner = undefined
    }
    return owner
  }
  as('failure-recorder', () => hooks.stepFailed.tap({ name: 'failure-recorder' }, (info) => void failures.push(info)))
  return { hooks, scope, failures, as, engine: () => Engine.build(hooks, { stepTimeoutMs }) }
}

export const sampleEvent = (): IngestEvent => ({
  uuid: '',
  event: 'e',
  distinctId: 'd',
  properties: {},
  timestamp: new Date(0),
})
export const sampleContext = (): EventContext => ({
  project: { id: 1, name: 'p', apiToken: 'phc_x', secretApiToken: 'phs_x', timezone: 'UTC' },
  raw: {},
  receivedAt: new Date(0),
  historicalMigration: false,
  logger,
  warn: () => undefined,
  sequence: new Map(),
})
