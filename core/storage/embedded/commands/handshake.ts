import os from 'node:os'
import { Long, ObjectId, Timestamp } from 'bson'
import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { MAX_BSON_SIZE } from '../engine/writes.ts'
import { MAX_MESSAGE_SIZE } from '../wire/messages.ts'
import type { CommandContext, CommandHandler } from './context.ts'
import { commandTotals, scannedObjectsTotal } from './counters.ts'
import { opLatencies } from './latency.ts'

/** The MongoDB version whose behaviour the server follows (wire version 21 = 7.0). */
export const EMULATED_VERSION = '7.0.0'
const MAX_WIRE_VERSION = 21

function hello(body: Doc, ctx: CommandContext, legacyName: boolean): Doc {
  const { info } = ctx
  const me = info.address
  const reply: Doc = {
    ...(body.helloOk === true ? { helloOk: true } : {}),
    [legacyName ? 'ismaster' : 'isWritablePrimary']: true,
    maxBsonObjectSize: MAX_BSON_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
  }
  if (info.replSetName) {
    const now = new Timestamp({ t: Math.floor(Date.now() / 1000), i: 1 })
    Object.assign(reply, {
      setName: info.replSetName,
      setVersion: 1,
      hosts: [me],
      primary: me,
      me,
      secondary: false,
      electionId: new ObjectId('7fffffff0000000000000001'),
      lastWrite: {
        opTime: { ts: now, t: Long.fromNumber(1) },
        lastWriteDate: new Date(),
        majorityOpTime: { ts: now, t: Long.fromNumber(1) },
        majorityWriteDate: new Date(),
      },
    })
  }
  return { ...reply, ok: 1 }
}

const ok = () => ({ ok: 1 })

export const handshakeCommands: Record<string, CommandHandler> = {
  hello: (cmd, ctx) => hello(cmd.body, ctx, false),
  isMaster: (cmd, ctx) => hello(cmd.body, ctx, true),
  ismaster: (cmd, ctx) => hello(cmd.body, ctx, true),
  ping: ok,
  buildInfo: () => ({
    version: EMULATED_VERSION,
    gitVersion: 'hedgerow-embedded',
    versionArray: [7, 0, 0, 0],
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_SIZE,
    storageEngines: ['hedgerow-embedded'],
    modules: [],
    ok: 1,
  }),
  getParameter: (cmd, ctx) => {
    const out: Doc = { ok: 1 }
    if (cmd.body.featureCompatibilityVersion !== undefined || cmd.body.getParameter === '*')
      out.featureCompatibilityVersion = { version: '7.0' }
    if (cmd.body.ttlMonitorSleepSecs !== undefined || cmd.body.getParameter === '*')
      out.ttlMonitorSleepSecs = ctx.parameters.ttlMonitorSleepSecs
    return out
  },
  setParameter: (cmd, ctx) => {
    const value = cmd.body.ttlMonitorSleepSecs
    const others = Object.keys(cmd.body).filter(
      (k) =>
        !['setParameter', 'ttlMonitorSleepSecs', '$db', 'lsid', '$clusterTime', '$readPreference', 'comment'].includes(
          k,
        ),
    )
    if (others.length > 0)
      throw mongoError('InvalidOptions', `unrecognized parameter for the embedded server: ${others[0]}`)
    if (value === undefined) throw mongoError('InvalidOptions', 'no option found to set, use help:true to see options ')
    if (typeof value !== 'number' || value < 1)
      throw mongoError('BadValue', 'ttlMonitorSleepSecs must be a positive number')
    const was = ctx.parameters.ttlMonitorSleepSecs
    ctx.parameters.ttlMonitorSleepSecs = value
    return { was, ok: 1 }
  },
  serverStatus: (cmd, ctx) => ({
    host: ctx.info.address,
    version: EMULATED_VERSION,
    process: 'hedgerow-embedded-mongo',
    pid: Long.fromNumber(process.pid),
    uptime: Math.floor((Date.now() - ctx.info.startedAt.getTime()) / 1000),
    localTime: new Date(),
    connections: { current: 1, available: 1000 },
    mem: { resident: Math.round(process.memoryUsage().rss / 1048576), bits: 64 },
    opLatencies: opLatencies(isPlainObject(cmd.body.opLatencies) && cmd.body.opLatencies.histograms === true),
    metrics: {
      commands: Object.fromEntries(
        [...commandTotals()].map(([name, total]) => [name, { total: Long.fromNumber(total) }]),
      ),
      queryExecutor: { scannedObjects: Long.fromNumber(scannedObjectsTotal()) },
    },
    ok: 1,
  }),
  hostInfo: () => ({
    system: { hostname: os.hostname(), currentTime: new Date() },
    os: { type: process.platform },
    ok: 1,
  }),
  whatsmyuri: () => ({ you: '127.0.0.1:0', ok: 1 }),
  getLog: (cmd) =>
    cmd.body.getLog === '*' ? { names: ['startupWarnings'], ok: 1 } : { totalLinesWritten: 0, log: [], ok: 1 },
  getCmdLineOpts: () => ({ argv: ['hedgerow-embedded-mongo'], parsed: {}, ok: 1 }),
  connectionStatus: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
  endSessions: ok,
  killAllSessions: ok,
  killSessions: ok,
  refreshSessions: ok,
  startSession: () => ({ id: { id: new ObjectId() }, timeoutMinutes: 30, ok: 1 }),
  logout: ok,
  getDefaultRWConcern: () => ({
    defaultReadConcern: { level: 'local' },
    defaultWriteConcern: { w: 1, wtimeout: 0 },
    ok: 1,
  }),
  replSetGetStatus: (_cmd, ctx) => {
    if (!ctx.info.replSetName) throw mongoError('NoReplicationEnabled', 'not running with --replSet')
    return {
      set: ctx.info.replSetName,
      date: new Date(),
      myState: 1,
      members: [{ _id: 0, name: ctx.info.address, health: 1, state: 1, stateStr: 'PRIMARY', self: true }],
      ok: 1,
    }
  },
}
