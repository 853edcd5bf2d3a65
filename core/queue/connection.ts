/**
 * The NATS connection of a queue-mode node, and the boot check of the ingest stream: it exists
 * (created here when missing) with work-queue retention and captures `<prefix>.>`, so a wrong
 * setup stops boot with one line instead of failing every request.
 */
import os from 'node:os'
import { connect, RetentionPolicy, StorageType } from 'nats'
import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats'
import type { Logger } from 'pino'
import type { QueueSettings } from './settings.ts'

export interface QueueConnection {
  readonly nc: NatsConnection
  readonly js: JetStreamClient
  readonly jsm: JetStreamManager
  readonly settings: QueueSettings
  /** False between a lost connection and the reconnect (readiness reports it). */
  connected(): boolean
  close(): Promise<void>
}

const STREAM_NOT_FOUND = 10059

export async function openQueue(settings: QueueSettings, logger: Logger): Promise<QueueConnection> {
  const nc = await connect({
    servers: settings.servers,
    name: `hedgerow ${settings.role} ${os.hostname()}:${process.pid}`,
    timeout: settings.connectTimeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: settings.reconnectTimeWaitMs,
    token: settings.token,
    user: settings.user,
    pass: settings.pass,
  })
  let jsm: JetStreamManager
  try {
    jsm = await nc.jetstreamManager({ timeout: settings.connectTimeoutMs })
    await ensureIngestStream(jsm, settings)
  } catch (error) {
    await nc.close()
    throw new Error(`queue mode: ${(error as Error).message}`)
  }
  let connected = true
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') connected = false
      if (status.type === 'reconnect') connected = true
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') logger.warn({ status: status.type, data: String(status.data) }, 'queue connection status')
    }
  })()
  return {
    nc,
    js: nc.jetstream({ timeout: settings.publishTimeoutMs }),
    jsm,
    settings,
    connected: () => connected && !nc.isClosed(),
    async close() {
      let timer: NodeJS.Timeout | undefined
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, settings.publishTimeoutMs)))
      await Promise.race([nc.drain().catch((error: unknown) => logger.warn({ err: error }, 'queue drain failed')), deadline])
      clearTimeout(timer)
      if (!nc.isClosed()) await nc.close()
    },
  }
}

async function ensureIngestStream(jsm: JetStreamManager, settings: QueueSettings): Promise<void> {
  const subject = `${settings.subjectPrefix}.>`
  try {
    const { config } = await jsm.streams.info(settings.stream)
    if (config.retention !== RetentionPolicy.Workqueue) throw new Error(`JetStream stream "${settings.stream}" has ${config.retention} retention; the ingest stream needs workqueue retention`)
    if (!(config.subjects ?? []).includes(subject)) throw new Error(`JetStream stream "${settings.stream}" captures ${JSON.stringify(config.subjects)}, not "${subject}"`)
  } catch (error) {
    if ((error as { api_error?: { err_code?: number } }).api_error?.err_code !== STREAM_NOT_FOUND) throw error
    await jsm.streams.add({
      name: settings.stream,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: settings.replicas,
      duplicate_window: settings.duplicateWindowMs * 1_000_000,
    })
  }
}
