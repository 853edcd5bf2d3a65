/**
 * Operator CLI over the same functions as the admin API: `npm run cli -- <command>`.
 *   projects create <name> [--timezone <IANA zone>]
 *   projects list
 *   admin-key
 * It opens the configured database itself, so with the embedded store the service must be stopped
 * (one process owns the data folder); with MONGODB_URL it works while the service runs.
 */
import path from 'node:path'
import { pino } from 'pino'
import { loadConfig } from './config.ts'
import { openStorage } from './storage/mongo.ts'
import { ProjectStore, isValidTimezone } from './projects.ts'
import { resolveAdminKey } from './admin/key.ts'
import { projectJson } from './admin/routes.ts'

const USAGE = `usage: npm run cli -- projects create <name> [--timezone <zone>] | projects list | admin-key`

async function main(argv: string[]): Promise<number> {
  const rootDir = process.cwd()
  const { config } = loadConfig(rootDir)
  const dataDir = path.resolve(rootDir, config.storage.dataDir)
  const [group, command, ...rest] = argv
  if (group === 'admin-key') {
    console.log(resolveAdminKey(config.admin.apiKey, dataDir).key)
    return 0
  }
  if (group !== 'projects' || !['create', 'list'].includes(command ?? '')) {
    console.error(USAGE)
    return 2
  }
  const storage = await openStorage({ ...config, storage: { ...config.storage, dataDir } }, pino({ level: 'error' }))
  try {
    const projects = new ProjectStore(storage.db)
    if (command === 'list') {
      for (const project of await projects.list()) console.log(JSON.stringify(projectJson(project)))
      return 0
    }
    const name = rest.find((arg, i) => !arg.startsWith('--') && rest[i - 1] !== '--timezone')
    const timezoneAt = rest.indexOf('--timezone')
    const timezone = timezoneAt >= 0 ? rest[timezoneAt + 1] : undefined
    if (!name || (timezone !== undefined && !isValidTimezone(timezone))) {
      console.error(name ? `not an IANA time zone: ${timezone}` : USAGE)
      return 2
    }
    console.log(JSON.stringify(projectJson(await projects.create({ name, timezone })), null, 2))
    return 0
  } finally {
    await storage.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`hedgerow: ${(error as Error).message}`)
    process.exit(1)
  },
)
