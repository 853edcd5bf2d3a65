import { expect } from 'chai'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {
  FolderInUseError,
  lockFolder,
  lockMechanism,
} from '../../../../../core/storage/embedded/persistence/folder-lock.ts'

const MODULE = path.resolve(import.meta.dirname, '../../../../../core/storage/embedded/persistence/folder-lock.ts')

/** Takes the lock, listens on the socket it names like the server does, says so, and waits. */
const HOLDER = `
const { lockFolder } = await import(process.env.LOCK_MODULE)
const net = await import('node:net')
const dir = process.env.LOCK_DIR
const socketPath = dir + '/mongod.sock'
if (process.env.LOCK_GO) {
  console.log('ready')
  await new Promise((resolve) => process.stdin.once('data', resolve))
}
try {
  await lockFolder(dir, { socketPath, waitMs: 0 })
  net.createServer().listen(socketPath, () => console.log('locked ' + process.pid))
  setInterval(() => undefined, 1000)
} catch (error) {
  console.log('refused ' + error.message)
  process.exit(1)
}
`

interface Holder {
  child: ChildProcess
  /** The pid of the process that took (or tried) the lock. */
  pid: number
  output: () => string
}

/**
 * A process that takes the lock. With `unreaped`, it runs under a shell that does not wait for it
 * until told to (a line on the shell's stdin): once killed it stays a zombie, as under a
 * supervisor that has not yet called wait().
 */
function startHolder(dir: string, options: { unreaped?: boolean; waitForGo?: boolean } = {}): Promise<Holder> {
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', HOLDER]
  const env = { ...process.env, LOCK_MODULE: MODULE, LOCK_DIR: dir, LOCK_GO: options.waitForGo ? '1' : '' }
  const child = options.unreaped
    ? spawn('sh', ['-c', '"$@" & read _; wait $!', 'keeper', ...node], { env, stdio: ['pipe', 'pipe', 'inherit'] })
    : spawn(node[0], node.slice(1), { env, stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the holder did not start: ${output}`)), 20_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const pid = /^locked (\d+)$/m.exec(output)?.[1]
      if (pid || (options.waitForGo && /^ready$/m.test(output))) {
        clearTimeout(timer)
        resolve({ child, pid: Number(pid ?? child.pid), output: () => output })
      }
    })
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}): ${output}`)))
    children.push(child)
  })
}

/** Every process a test started; the keepers among them reap their killed child when told to. */
const children: ChildProcess[] = []

const closed = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('close', resolve),
  )
const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0]

async function refusal(dir: string, waitMs = 0): Promise<FolderInUseError> {
  const error = await lockFolder(dir, { socketPath: path.join(dir, 'mongod.sock'), waitMs }).then(
    async (lock) => {
      await lock.release()
      return new Error('the lock was granted')
    },
    (e: Error) => e,
  )
  expect(error).to.be.instanceOf(FolderInUseError)
  return error as FolderInUseError
}

describe('lockFolder', function () {
  this.timeout(30_000)
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-lock-'))
  })
  afterEach(async () => {
    for (const child of children.splice(0)) {
      // a child that already exited closed its stdin: the write would fail with EPIPE, which is no failure here
      child.stdin?.on('error', () => undefined)
      if (child.exitCode === null && child.signalCode === null) child.stdin?.end('go\n')
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000)
      if (child.spawnfile !== 'sh') child.kill('SIGKILL')
      await closed(child)
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('refuses a folder a live process holds, naming the folder and the holder', async () => {
    const holder = await startHolder(dir)
    const error = await refusal(dir)
    expect(error.message).to.include(`data folder ${dir} is in use`).and.to.include(`process ${holder.pid}`)
  })

  it('is taken over at once from a holder killed with SIGKILL that is not yet reaped', async function () {
    if (lockMechanism() === 'socket-probe' || !existsSync('/proc/self/stat')) this.skip()
    const holder = await startHolder(dir, { unreaped: true })
    process.kill(holder.pid, 'SIGKILL')
    const started = performance.now()
    const lock = await lockFolder(dir, { socketPath: path.join(dir, 'mongod.sock') })
    const tookMs = performance.now() - started
    try {
      // The premise: dead, unreaped, and its PID still answers kill(pid, 0) (what the PID file trusted).
      while (stateOf(holder.pid) !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10))
      expect(() => process.kill(holder.pid, 0)).not.to.throw()
      expect(tookMs).to.be.below(1_500)
      expect(readFileSync(path.join(dir, 'mongod.lock'), 'utf8')).to.equal(
        `${process.pid}\n${path.join(dir, 'mongod.sock')}\n`,
      )
    } finally {
      await lock.release()
    }
  })

  it('ignores a PID left in mongod.lock, even one a live unrelated process now has', async () => {
    const unrelated = spawn('sleep', ['30'])
    children.push(unrelated)
    writeFileSync(path.join(dir, 'mongod.lock'), `${unrelated.pid}\n${path.join(dir, 'mongod.sock')}\n`)
    const lock = await lockFolder(dir, { socketPath: path.join(dir, 'mongod.sock'), waitMs: 0 })
    await lock.release()
  })

  it('gives the folder to exactly one of several processes starting at the same instant', async () => {
    const contenders = await Promise.all(Array.from({ length: 5 }, () => startHolder(dir, { waitForGo: true })))
    // Each has loaded the module and waits on stdin: release them together.
    for (const c of contenders) c.child.stdin!.write('go\n')
    const deadline = Date.now() + 20_000
    const settled = () => contenders.filter((c) => /^(locked|refused)/m.test(c.output())).length
    while (settled() < contenders.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    const outcomes = contenders.map((c) => /^(locked|refused)/m.exec(c.output())?.[1])
    expect(
      outcomes.filter((o) => o === 'locked'),
      outcomes.join(','),
    ).to.have.length(1)
    expect(outcomes.filter((o) => o === 'refused')).to.have.length(contenders.length - 1)
  })

  it('refuses a folder whose recorded socket a live server answers (a holder its lock cannot see)', async () => {
    const socketPath = path.join(dir, 'elsewhere.sock')
    const live = createServer((c) => c.destroy())
    await new Promise<void>((resolve) => live.listen(socketPath, resolve))
    try {
      writeFileSync(path.join(dir, 'mongod.lock'), `4242\n${socketPath}\n`)
      const error = await refusal(dir)
      expect(error.message).to.include(`listening on ${socketPath}`).and.to.include('process 4242')
    } finally {
      live.close()
    }
  })

  it('refuses a second lock in the same process at once, and grants it again after release', async () => {
    const lock = await lockFolder(dir, { socketPath: path.join(dir, 'mongod.sock') })
    const started = performance.now()
    expect((await refusal(dir, 5_000)).message).to.match(/already open in this process/)
    expect(performance.now() - started).to.be.below(1_000)
    await lock.release()
    expect(existsSync(path.join(dir, 'mongod.lock'))).to.equal(lockMechanism() === 'o-exlock')
    const again = await lockFolder(dir, { socketPath: path.join(dir, 'mongod.sock'), waitMs: 0 })
    await again.release()
  })
})
