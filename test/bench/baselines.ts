/**
 * The bare node:http baselines, run as their own process like the service:
 * - `POST /i/v0/e/`: parse the JSON event, store it with `insertOne` (same indexes and write
 *   concern as sink-mongo), answer `{"status":1}` (figure 3);
 * - `POST /echo`: parse the JSON body and send it back (figure 4's baseline: any JSON endpoint's limit);
 * - `PUT /ceiling/definitions`, then `POST /ceiling/flags`: the flags endpoint's work without
 *   framework or database (ceiling.ts), figure 4's reference for what is reachable at all;
 *   `POST /ceiling/flags-interpreted`: the same with the reference interpreter (the compiled flags' gain).
 */
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { MongoClient } from 'mongodb'
import { FlagsCeiling } from './ceiling.ts'
import type { SdkDefinitions } from './flags.ts'

const client = new MongoClient(process.env.MONGODB_URL!)
await client.connect()
const events = client.db(process.env.MONGODB_DB!).collection('baseline_single')
await events.createIndexes([
  { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
  { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
  { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
])
const writeConcern = { w: 'majority' as const, j: true }

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
}

let ceiling: FlagsCeiling | undefined

const server = http.createServer(async (req, res) => {
  try {
    if (req.url === '/health') return send(res, 200, '{"status":"ok"}')
    if ((req.url === '/ceiling/flags' || req.url === '/ceiling/flags-interpreted') && ceiling) {
      const body = await ceiling.answer(await readBody(req), req.url === '/ceiling/flags-interpreted')
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length })
      return res.end(body)
    }
    const parsed = JSON.parse(await readBody(req)) as Record<string, unknown>
    if (req.url === '/ceiling/definitions') {
      ceiling = new FlagsCeiling(parsed as unknown as SdkDefinitions)
      return send(res, 200, '{"status":1}')
    }
    if (req.url === '/echo') return send(res, 200, JSON.stringify(parsed))
    const now = new Date()
    await events.insertOne(
      {
        uuid: randomUUID(),
        project_id: 1,
        event: parsed.event,
        distinct_id: parsed.distinct_id,
        properties: parsed.properties,
        timestamp: new Date(String(parsed.timestamp)),
        created_at: now,
      },
      { writeConcern },
    )
    send(res, 200, '{"status":1}')
  } catch (error) {
    send(res, 500, JSON.stringify({ error: String(error) }))
  }
})
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => {
  server.close(() => void client.close().then(() => process.exit(0)))
  server.closeAllConnections()
})
