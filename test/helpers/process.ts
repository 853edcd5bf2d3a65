/**
 * Child processes for the npm start, crash and outage tests: the service as `npm start` runs it, and the
 * embedded database as `npm run mongo-embedded` runs it, each killable with any signal and each
 * read through its output lines.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { ROOT_DIR } from './service.ts'

export interface Child {
  readonly process: ChildProcess
  readonly lines: Array<Record<string, unknown>>
  /** Raw stdout and stderr, for the log-leak checks. */
  output(): string
  waitFor(
    test: (line: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>
  exited: Promise<number | null>
  kill(signal: NodeJS.Signals): Promise<void>
}

function watch(child: ChildProcess, stdoutOnly = false): Child {
  const lines: Array<Record<string, unknown>> = []
  let buffer = ''
  let raw = ''
  const waiters: Array<() => void> = []
  const onData = (chunk: Buffer) => {
    raw += chunk.toString()
    buffer += chunk.toString()
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        lines.push({ msg: line })
      }
    }
    waiters.splice(0).forEach((w) => w())
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', stdoutOnly ? (c: Buffer) => (raw += c.toString()) : onData)
  // 'close', not 'exit': the last output lines may still be in the pipes when the process exits
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return {
    process: child,
    lines,
    output: () => raw,
    exited,
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill(signal)
      await exited
    },
    async waitFor(test, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = lines.find(test)
        if (found) return found
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no ${what} in the output of pid ${child.pid}: ${raw.slice(-2000)}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    },
  }
}

const SERVICE = [process.execPath, '--import', 'tsx', 'core/main.ts']
const serviceEnv = (env: Record<string, string>) => ({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  ...env,
})

/**
 * The service as an operator runs it, configured through the environment, but from the TypeScript
 * sources (tsx), so no build precedes it; test/core/launch.test.ts covers the compiled start.
 */
export function spawnService(env: Record<string, string>): Child {
  const child = spawn(SERVICE[0], SERVICE.slice(1), {
    cwd: ROOT_DIR,
    env: serviceEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return watch(child)
}

const listening = async (watched: Child, timeoutMs?: number) =>
  (await watched.waitFor((l) => l.msg === 'hedgerow is listening', 'listening line', timeoutMs)) as { url: string }

/** `spawnService`, once it logged that it listens. */
export async function startServiceProcess(env: Record<string, string>): Promise<Child & { url: string }> {
  const watched = spawnService(env)
  const { url } = await listening(watched)
  return { ...watched, url }
}

export interface UnreapedService extends Child {
  readonly url: string
  /** The service's own pid (the Child's process is the shell that holds it). */
  readonly pid: number
  /** Lets the shell wait for the service; resolves with the service's exit code (128 + signal when killed). */
  reap(): Promise<number | null>
}

/**
 * The service under a shell that reaps it only when `reap()` is called: killed, it stays a zombie
 * still holding its PID, as under a supervisor that restarts it before calling wait().
 */
export async function startUnreapedService(env: Record<string, string>): Promise<UnreapedService> {
  const shell = spawn('sh', ['-c', '"$@" & echo "{\\"servicePid\\":$!}"; read _; wait $!', 'keeper', ...SERVICE], {
    cwd: ROOT_DIR,
    env: serviceEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const watched = watch(shell)
  const { servicePid } = (await watched.waitFor((l) => typeof l.servicePid === 'number', 'service pid')) as {
    servicePid: number
  }
  const reap = () => {
    shell.stdin!.end('\n')
    return watched.exited
  }
  try {
    // Generous: on a loaded machine a cold start (TypeScript compiled on the fly) takes seconds.
    const { url } = await listening(watched, 60_000)
    const kill = async (signal: NodeJS.Signals) => {
      if (watched.process.exitCode === null) process.kill(servicePid, signal)
      await reap()
    }
    return { ...watched, url, pid: servicePid, reap, kill }
  } catch (error) {
    process.kill(servicePid, 'SIGKILL')
    await reap()
    throw error
  }
}

/** The embedded database as its own process on a fixed port (so a restart keeps the same URL). */
export async function startMongoProcess(port: number, dataDir: string): Promise<Child & { url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'core/storage/embedded/main.ts', '--port', String(port), '--data', dataDir],
    {
      cwd: ROOT_DIR,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const watched = watch(child)
  await watched.waitFor((l) => typeof l.msg === 'string' && /listen|ready|started/i.test(l.msg), 'listening line')
  return { ...watched, url: `mongodb://127.0.0.1:${port}/?directConnection=true` }
}

/** A free TCP port: bind to 0, read it, release it. */
export async function freePort(): Promise<number> {
  const net = await import('node:net')
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
