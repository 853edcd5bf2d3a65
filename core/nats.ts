/**
 * NATS connections, for queue mode and plugins alike (`PluginApi.connectNats`): connecting with
 * reconnection retried forever, logging status changes, and closing with a bound so an
 * unreachable server cannot hold up shutdown.
 */
import { connect } from 'nats'
import type { Logger } from 'pino'
import type { NatsConnectionSettings, WatchedConnection } from './plugin-api.ts'

// sink-nats takes the same settings in its options, so the fragment is in the plugin contract.
export { natsConnectionFields, type NatsConnectionSettings, type WatchedConnection } from './plugin-api.ts'

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
