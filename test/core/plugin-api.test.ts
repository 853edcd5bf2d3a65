import { expect } from 'chai'
import { MongoBulkWriteError, MongoClient } from 'mongodb'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import Koa from 'koa'
import { pino } from 'pino'
import { errorsAndAccessLog } from '../../core/http/errors.ts'
import { CONTRACT, ROOT, specifiers } from './import-graph.ts'
import type { ErrorCode } from '../../core/plugin-api.ts'
import {
  ERROR_CATALOGUE,
  HttpError,
  copyRecord,
  isDuplicateKey,
  httpError,
  isRetryable,
  retryableError,
  withFields,
} from '../../core/plugin-api.ts'

describe('plugin-api: the cheap copies of events and records', () => {
  it('withFields is a spread: the same keys and values, the source untouched', () => {
    const source = { a: 1, b: 2 }
    const made = withFields<Record<string, number>>(source, { b: 3, c: 4 })
    expect(made).to.deep.equal({ a: 1, b: 3, c: 4 })
    expect(source).to.deep.equal({ a: 1, b: 2 })
  })

  it('copyRecord keeps the key order and keeps a __proto__ key as an own property, as a spread does', () => {
    const source = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":2}') as Record<string, unknown>
    const copy = copyRecord(source)
    expect(Object.keys(copy)).to.deep.equal(['b', '__proto__', 'a'])
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect((copy as { polluted?: unknown }).polluted).to.equal(undefined)
    expect(copy).to.deep.equal({ ...source })
  })
})

describe('plugin-api: isDuplicateKey', () => {
  it("tells a unique index's refusal, alone or in a bulk write, from the database's other errors", async () => {
    const client = await new MongoClient(await testMongoUrl()).connect()
    const db = client.db(testDbName('duplicate_key'))
    try {
      const collection = db.collection('things')
      await collection.createIndex({ key: 1 }, { unique: true })
      await collection.insertOne({ key: 'a' })
      const single = await collection.insertOne({ key: 'a' }).catch((error: unknown) => error)
      expect(isDuplicateKey(single)).to.equal(true)
      const bulk = await collection
        .insertMany([{ key: 'a' }, { key: 'b' }], { ordered: false })
        .catch((error: unknown) => error)
      expect(bulk).to.be.instanceOf(MongoBulkWriteError)
      expect([(bulk as MongoBulkWriteError).writeErrors].flat().map(isDuplicateKey)).to.deep.equal([true])
      const other = await db.command({ noSuchCommand: 1 }).catch((error: unknown) => error)
      expect(isDuplicateKey(other)).to.equal(false)
      for (const value of [undefined, null, 'E11000', { code: '11000' }]) expect(isDuplicateKey(value)).to.equal(false)
    } finally {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    }
  })
})

describe('plugin-api: the error catalogue', () => {
  const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[]

  it('gives every code a client error status with a validation or authentication type, or a server status with server_error', () => {
    for (const code of codes) {
      const { status, type } = ERROR_CATALOGUE[code]
      if (status >= 500) expect(type, code).to.equal('server_error')
      else if (status === 401) expect(type, code).to.equal('authentication_error')
      else expect([status >= 400 && status < 500, type], code).to.deep.equal([true, 'validation_error'])
    }
  })

  it('marks as retryable exactly the codes whose status SDKs retry (429, 503)', () => {
    const retryable = codes.filter((code) => ERROR_CATALOGUE[code].retryable)
    expect(retryable).to.have.members(['rate_limited', 'unavailable'])
    for (const code of codes) expect(isRetryable(httpError(code, 'x')), code).to.equal(ERROR_CATALOGUE[code].retryable)
  })

  it('httpError makes the body the catalogue describes', () => {
    const error = httpError('not_found', 'no flag with id 7', 'id')
    expect(error).to.be.instanceOf(HttpError)
    expect(error.status).to.equal(404)
    expect(error.toBody()).to.deep.equal({
      type: 'validation_error',
      code: 'not_found',
      detail: 'no flag with id 7',
      attr: 'id',
    })
    expect(httpError('event_too_large', 'too big').status).to.equal(413)
    expect(httpError('stale_version', 'changed', 'version').status).to.equal(409)
  })

  it('retryableError is retryable without being an HttpError, and keeps its cause', () => {
    const cause = new Error('lost a race')
    const error = retryableError('too many concurrent writers, retry', { cause })
    expect(error).to.not.be.instanceOf(HttpError)
    expect(isRetryable(error)).to.equal(true)
    expect(error.cause).to.equal(cause)
    expect(isRetryable(new Error('a bug'))).to.equal(false)
  })

  it('reaches the client over HTTP as the catalogue says, and maps a framework 4xx onto it', async () => {
    const app = new Koa()
    app.use(errorsAndAccessLog(pino({ level: 'silent' })))
    app.use((ctx) => {
      if (ctx.path === '/limited') throw httpError('rate_limited', 'retry in 3 s')
      if (ctx.path === '/framework')
        throw Object.assign(new Error('unsupported charset'), { status: 415, expose: true })
      throw Object.assign(new Error('body too big'), { status: 413, expose: true })
    })
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const limited = await fetch(`${url}/limited`)
      expect(limited.status).to.equal(429)
      expect(await limited.json()).to.deep.equal({
        type: 'validation_error',
        code: 'rate_limited',
        detail: 'retry in 3 s',
        attr: null,
      })
      const framework = await fetch(`${url}/framework`)
      expect([framework.status, ((await framework.json()) as { code: string }).code]).to.deep.equal([
        400,
        'invalid_request',
      ])
      const large = await fetch(`${url}/large`)
      expect([large.status, ((await large.json()) as { code: string }).code]).to.deep.equal([413, 'payload_too_large'])
    } finally {
      server.close()
    }
  })
})

describe('plugin-api: what the published file needs at run time', () => {
  it('imports no file of the repository and no package the service does not depend on', () => {
    const source = readFileSync(path.join(ROOT, CONTRACT), 'utf8')
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    const packageOf = (specifier: string) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/')
    for (const specifier of specifiers(source)) {
      expect(specifier, 'a relative import would be missing from the published single file').to.not.match(/^\./)
      if (!specifier.startsWith('node:')) expect(pkg.dependencies, specifier).to.have.property(packageOf(specifier))
    }
  })
})
