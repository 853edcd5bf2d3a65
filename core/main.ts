/**
 * `npm start`: load the layered config, start the service, and shut down cleanly on SIGTERM/SIGINT.
 * A configuration or plugin error exits 1 with one line saying what and where. With more than one
 * worker (`server.workers`), this process becomes the cluster primary and each worker runs the
 * service (see cluster.ts).
 */
// first: V8 settings apply only to code evaluated after them
import './v8-settings.ts'
import cluster from 'node:cluster'
import { startPrimary, workerCount } from './cluster.ts'
import { loadConfig } from './config.ts'
import { createService } from './index.ts'
import { createLogger, stdoutDestination } from './logger.ts'
import type { Config } from './config.ts'
import type { Logger } from 'pino'

const rootDir = process.cwd()

async function main(): Promise<void> {
  const { config, configDir, sources } = loadConfig(rootDir)
  const logger = createLogger(config.log.level, stdoutDestination(config.log.format))
  const consumesOnly = config.mode === 'queue' && config.queue.role === 'worker'
  const workers = consumesOnly ? 1 : workerCount(config)
  if (cluster.isPrimary && workers > 1) return runPrimary(config, logger, workers, sources)
  if (cluster.isPrimary) logger.info({ sources }, 'configuration loaded')
  const service = await createService({ config, configDir, rootDir, logger })
  if (consumesOnly) {
    // A queue worker serves no HTTP: it consumes the ingest stream (run more processes for more cores).
    logger.info(
      {
        worker: service.queueWorker?.id,
        partitions: service.queueWorker?.partitions,
        plugins: service.plugins.map((p) => p.id),
      },
      'hedgerow worker is consuming',
    )
    return onSignal(logger, () => service.close())
  }
  const { url } = await service.listen()
  if (cluster.isPrimary) logger.info({ url, plugins: service.plugins.map((p) => p.id) }, 'hedgerow is listening')
  onSignal(logger, () => service.close())
}

async function runPrimary(config: Config, logger: Logger, workers: number, sources: string[]): Promise<void> {
  logger.info({ sources, workers }, 'configuration loaded')
  const primary = await startPrimary({ config, rootDir, logger, workers })
  onSignal(logger, () => primary.stop())
  try {
    await primary.ready
  } catch (error) {
    await primary.stop()
    throw error
  }
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host
  logger.info({ url: `http://${host}:${config.server.port}`, workers }, 'hedgerow is listening')
}

/** SIGTERM/SIGINT: close once, then exit 0 (1 when closing failed). */
function onSignal(logger: Logger, close: () => Promise<void>): void {
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    if (cluster.isPrimary) logger.info({ signal }, 'shutting down')
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

main().catch((error: unknown) => {
  process.stderr.write(`hedgerow: ${(error as Error).message}\n`)
  process.exit(1)
})
