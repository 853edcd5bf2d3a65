/** Hooks with the real isolation wrapper, and a way to tap them as a named plugin would. */
import { pino } from 'pino'
import { createHooks } from '../../core/hooks.ts'
import type { IsolationState, TapOwner } from '../../core/isolation.ts'
import type { EventContext, IngestEvent, IngestHooks, StepInfo } from '../../core/plugin-api.ts'

const logger = pino({ level: 'silent' })

export function hooksWithOwner(stepTimeoutMs = 1000): {
  hooks: IngestHooks
  state: IsolationState
  failures: StepInfo[]
  as: (id: string, fn: () => void, required?: boolean) => TapOwner
} {
  const failures: StepInfo[] = []
  const state: IsolationState = { stepTimeoutMs, onStepFailed: (info) => failures.push(info) }
  const hooks = createHooks(state)
  const as = (id: string, fn: () => void, required = false) => {
    const owner: TapOwner = { id, required, logger, tapped: [] }
    state.owner = owner
    try {
      fn()
    } finally {
      state.owner = undefined
    }
    return owner
  }
  return { hooks, state, failures, as }
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
