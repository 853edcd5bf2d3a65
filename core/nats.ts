/**
 * NATS connections, for queue mode and the sink-nats plugin alike: the settings (a TypeBox
 * fragment both schemas spread), connecting with reconnection retried forever, logging status
 * changes, and closing with a bound so an unreachable server cannot hold up shutdown.
 */
import { connect } from 'nats'
import type { NatsConnection } from 'nats'
import type { Logger } from 'pino'
import { Type } from 'typebox'

export const natsConnectionFields = {
  servers: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], {
    default: 'nats://127.0.0.1:4222',
  }),
  connectTimeoutMs: Type.Integer({ minimum: 1, default: 5000 }),
  /** Wait between reconnection attempts after the connection is lost (it is retried forever). */
  reconnectTimeWaitMs: Type.Integer({ minimum: 1, default: 2000 }),
  token: Type.Optional(Type.String({ minLength: 1 })),
  user: Type.Optional(Type.String({ minLength: 1 })),
  pass: Type.Optional(Type.String({ minLength: 1 })),
}

export interface NatsConnectionSettings {
  readonly servers: string | string[]
  readonly connectTimeoutMs: number
  readonly reconnectTimeWaitMs: number
  readonly token?: string
  readonly user?: string
  readonly pass?: string
}

export interface WatchedConnection {
  readonly nc: NatsConnection
  /** False between a lost connection and the reconnect. */
  connected(): boolean
  /** Drains within `timeoutMs`, then closes whatever is left. */
  close(timeoutMs: number): Promise<void>
}

export async function connectNats(
  settings: NatsConnectionSettings,
  name: string,
  logger: Logger,
): Promise<WatchedConnection> {
  const nc = await connect({
    servers: settings.servers,
    name,
    timeout: settings.connectTimeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: settings.reconnectTimeWaitMs,
    token: settings.token,
    user: settings.user,
    pass: settings.pass,
  })
  let connected = true
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') connected = false
      if (status.type === 'reconnect') connected = true
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error')
        logger.warn({ status: status.type, data: String(status.data) }, `${name}: NATS connection status`)
    }
  })()
  return {
    nc,
    connected: () => connected && !nc.isClosed(),
    async close(timeoutMs) {
      let timer: NodeJS.Timeout | undefined
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))
      await Promise.race([
        nc.drain().catch((error: unknown) => logger.warn({ err: error }, `${name}: NATS drain failed`)),
        deadline,
      ])
      clearTimeout(timer)
      if (!nc.isClosed()) await nc.close()
    },
  }
}
