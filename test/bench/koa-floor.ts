/**
 * What Koa itself costs per flags-sized exchange (docs/performance.md, "Koa's floor"):
 * `npx tsx test/bench/koa-floor.ts`. Two servers, each its own process, do the same work (read the
 * body of a bench flags request, parse it, answer a fixed 12.6 KB buffer): one in bare node:http,
 * one behind Koa and @koa/router with one middleware, as a cross-origin route is. Each is driven by
 * autocannon at 32 connections, twice for BENCH_SECONDS (default 5) each, and its CPU per request
 * is read from the server's own `process.cpuUsage`.
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import Router from '@koa/router'
import autocannon from 'autocannon'
import Koa from 'koa'
import { benchUsers, flagsBodies } from './payloads.ts'

const ANSWER = Buffer.alloc(12_615, '{')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

const cpuText = () => JSON.stringify(process.cpuUsage())

function bare(port: number): void {
  http
    .createServer(async (req, res) => {
      if (req.url === '/cpu') return res.end(cpuText())
      JSON.parse((await readBody(req)).toString())
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': ANSWER.length })
      res.end(ANSWER)
    })
    .listen(port, '127.0.0.1')
}

function koa(port: number): void {
  const app = new Koa()
  const router = new Router()
  router.get('/cpu', (ctx) => {
    ctx.body = cpuText()
  })
  router.post(
    '/flags/',
    (ctx, next) => {
      ctx.set('Access-Control-Allow-Origin', '*')
      return next()
    },
    async (ctx) => {
      JSON.parse((await readBody(ctx.req)).toString())
      ctx.set('Content-Type', 'application/json; charset=utf-8')
      ctx.body = ANSWER
    },
  )
  app.use(router.routes())
  app.listen(port, '127.0.0.1')
}

async function measure(kind: 'bare' | 'koa', bodies: string[]): Promise<void> {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!], {
    env: { ...process.env, KOA_FLOOR_SERVER: kind, PORT: String(port) },
    stdio: 'inherit',
  })
  const cpu = async () => (await (await fetch(`http://127.0.0.1:${port}/cpu`)).json()) as NodeJS.CpuUsage
  for (let attempt = 0; ; attempt++) {
    try {
      await cpu()
      break
    } catch (error) {
      if (attempt > 100) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  for (let round = 0; round < 2; round++) {
    let next = 0
    const before = await cpu()
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/flags/`,
      connections: 32,
      duration: SECONDS,
      method: 'POST',
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: bodies[next++ % bodies.length],
            headers: { 'content-type': 'application/json' },
          }),
        },
      ],
    })
    const after = await cpu()
    const micros = (after.user - before.user + after.system - before.system) / (result.requests.total ?? 0)
    console.log(
      `${kind.padEnd(4)} ${Math.round(result.requests.average)} req/s, ${micros.toFixed(1)} µs of CPU per request`,
    )
  }
  child.kill()
  await new Promise((resolve) => child.on('exit', resolve))
}

const server = process.env.KOA_FLOOR_SERVER
if (server === 'bare') bare(Number(process.env.PORT))
else if (server === 'koa') koa(Number(process.env.PORT))
else {
  const bodies = flagsBodies('phc_koa_floor', benchUsers(2000))
  await measure('bare', bodies)
  await measure('koa', bodies)
}
