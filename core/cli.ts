/**
 * Operator CLI over the same functions as the admin API: `npm run cli -- <command>`; `--help` lists
 * the commands (from the same table that runs them, so none is missing from it).
 * It opens the configured database itself, so with the embedded store the service must be stopped
 * (one process owns the data folder); with MONGODB_URL it works while the service runs.
 */
import path from 'node:path'
import { pino } from 'pino'
import { loadConfig } from './config.ts'
import type { Config } from './config.ts'
import { openStorage } from './storage/mongo.ts'
import { ProjectStore, isValidTimezone } from './projects.ts'
import { resolveAdminKey } from './admin/key.ts'
import { projectJson } from './admin/routes.ts'

interface Command {
  /** The words that select it, e.g. `projects create`. */
  name: string
  args?: string
  summary: string
  run(args: string[]): Promise<number>
}

const COMMANDS: Command[] = [
  {
    name: 'projects create',
    args: '<name> [--timezone <zone>]',
    summary: 'create a project and print it with its keys (zone: an IANA time zone, default UTC)',
    run: createProject,
  },
  {
    name: 'projects list',
    summary: 'print every project with its keys, one JSON line each',
    run: () =>
      withProjects(async (projects) => {
        for (const project of await projects.list()) console.log(JSON.stringify(projectJson(project)))
        return 0
      }),
  },
  {
    name: 'admin-key',
    summary:
      'print the admin API key: ADMIN_API_KEY, or the one kept in the data folder (generated there if there is none)',
    async run() {
      const { config, dataDir } = configured()
      console.log(resolveAdminKey(config.admin.apiKey, dataDir).key)
      return 0
    },
  },
  {
    name: 'help',
    summary: 'print this help (also --help, -h)',
    async run() {
      console.log(help())
      return 0
    },
  },
]

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => usageOf(c).length))
  return [
    'usage: npm run cli -- <command>',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${usageOf(c).padEnd(width)}  ${c.summary}`),
    '',
    'The configuration is read as `npm start` reads it (config/*.json, CONFIG_FILE, the environment).',
    'With the embedded store, stop the service first (one process owns the data folder); with MONGODB_URL',
    'the CLI works while the service runs.',
  ].join('\n')
}

const usageOf = (c: Command) => (c.args ? `${c.name} ${c.args}` : c.name)

/** The command whose words start argv, and the arguments after them. */
function commandOf(argv: string[]): { command: Command; args: string[] } | undefined {
  if (argv[0] === '--help' || argv[0] === '-h') return { command: COMMANDS.find((c) => c.name === 'help')!, args: [] }
  for (const command of COMMANDS) {
    const words = command.name.split(' ')
    if (words.every((word, i) => argv[i] === word)) return { command, args: argv.slice(words.length) }
  }
  return undefined
}

function configured(): { config: Config; dataDir: string } {
  const rootDir = process.cwd()
  const { config } = loadConfig(rootDir)
  return { config, dataDir: path.resolve(rootDir, config.storage.dataDir) }
}

async function withProjects(fn: (projects: ProjectStore) => Promise<number>): Promise<number> {
  const { config, dataDir } = configured()
  const storage = await openStorage({ ...config, storage: { ...config.storage, dataDir } }, pino({ level: 'error' }))
  try {
    return await fn(new ProjectStore(storage.db))
  } finally {
    await storage.close()
  }
}

async function createProject(args: string[]): Promise<number> {
  const name = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--timezone')
  const timezoneAt = args.indexOf('--timezone')
  const timezone = timezoneAt >= 0 ? args[timezoneAt + 1] : undefined
  if (!name) {
    console.error(`projects create needs a name: npm run cli -- ${usageOf(COMMANDS[0])}`)
    return 2
  }
  if (timezone !== undefined && !isValidTimezone(timezone)) {
    console.error(`not an IANA time zone: ${timezone}`)
    return 2
  }
  return withProjects(async (projects) => {
    console.log(JSON.stringify(projectJson(await projects.create({ name, timezone })), null, 2))
    return 0
  })
}

async function main(argv: string[]): Promise<number> {
  const found = commandOf(argv)
  if (found) return found.command.run(found.args)
  console.error(`${argv.length === 0 ? 'no command given' : `unknown command: ${argv.join(' ')}`}\n\n${help()}`)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`hedgerow: ${(error as Error).message}`)
    process.exit(1)
  },
)
