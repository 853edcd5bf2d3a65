/**
 * `npm start`: load the layered config, start the service, and shut down cleanly on SIGTERM/SIGINT.
 * A configuration or plugin error exits 1 with one line saying what and where.
 */
import { loadConfig } from './config.ts'
import { createService } from './index.ts'
import { createLogger } from './logger.ts'

const rootDir = process.cwd()

async function main(): Promise<void> {
  const { config, configDir, sources } = loadConfig(rootDir)
  const logger = createLogger(config.log.level)
  logger.info({ sources }, 'configuration loaded')
  const service = await createService({ config, configDir, rootDir, logger })
  const { url } = await service.listen()
  logger.info({ url, plugins: service.plugins.map((p) => p.id) }, 'hedgerow is listening')
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    service.close().then(
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
