/**
 * The NATS connection of a queue-mode node, and the boot check of the ingest stream: it exists
 * (created here when missing) with work-queue retention and captures `<prefix>.>`, so a wrong
 * setup stops boot with one line instead of failing every request.
 */
import os from 'node:os'
import { RetentionPolicy, StorageType } from 'nats'
import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats'
import type { Logger } from 'pino'
import { connectNats } from '../nats.ts'
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
  const connection = await connectNats(settings, `hedgerow ${settings.role} ${os.hostname()}:${process.pid}`, logger)
  const { nc } = connection
  let jsm: JetStreamManager
  try {
    jsm = await nc.jetstreamManager({ timeout: settings.connectTimeoutMs })
    await ensureIngestStream(jsm, settings)
  } catch (error) {
    await nc.close()
    throw new Error(`queue mode: ${(error as Error).message}`)
  }
  return {
    nc,
    js: nc.jetstream({ timeout: settings.publishTimeoutMs }),
    jsm,
    settings,
    connected: connection.connected,
    close: () => connection.close(settings.publishTimeoutMs),
  }
}

async function ensureIngestStream(jsm: JetStreamManager, settings: QueueSettings): Promise<void> {
  const subject = `${settings.subjectPrefix}.>`
  try {
    const { config } = await jsm.streams.info(settings.stream)
    if (config.retention !== RetentionPolicy.Workqueue)
      throw new Error(
        `JetStream stream "${settings.stream}" has ${config.retention} retention; the ingest stream needs workqueue retention`,
      )
    if (!(config.subjects ?? []).includes(subject))
      throw new Error(
        `JetStream stream "${settings.stream}" captures ${JSON.stringify(config.subjects)}, not "${subject}"`,
      )
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
