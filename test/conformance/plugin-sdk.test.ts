import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import pino from 'pino'
import { errorsAndAccessLog } from '../../core/http/errors.ts'
import { generatePluginApi } from '../../.plugin-sdk/build.ts'
import * as source from '../../core/plugin-api.ts'
import * as published from '../../.plugin-sdk/plugin-api.js'

const SDK = path.resolve(import.meta.dirname, '../../.plugin-sdk')

describe('the hedgerow/plugin-api export', () => {
  it('is generated from core/plugin-api.ts and committed up to date (npm run build:plugin-sdk)', () => {
    for (const [name, text] of Object.entries(generatePluginApi())) {
      expect(readFileSync(path.join(SDK, name), 'utf8'), `.plugin-sdk/${name} is stale`).to.equal(text)
    }
  })

  it('exports the same run-time values as the contract', () => {
    expect(Object.keys(published).sort()).to.deep.equal(Object.keys(source).sort())
    expect(published.API_VERSION).to.equal(source.API_VERSION)
    expect(published.isDropped(published.drop('r', { a: 1 }))).to.equal(true)
  })
})

describe('the error catalogue in the published contract', () => {
  it('works standalone: the published helpers make the same errors as the service', () => {
    const publishedBad = published.badRequest('bad_thing', 'that is bad', 'x')
    expect(publishedBad.toBody()).to.deep.equal(source.badRequest('bad_thing', 'that is bad', 'x').toBody())
    expect(published.isRetryable(published.unavailable('later'))).to.equal(true)
    expect(published.isRetryable(published.tooLarge('too big'))).to.equal(false)
  })

  it('is the same HttpError on both sides: instanceof and retryability hold across the two copies', () => {
    expect(published.HttpError).to.not.equal(source.HttpError)
    expect(new published.HttpError(409, 'validation_error', 'conflict', 'taken')).to.be.instanceOf(source.HttpError)
    expect(source.unauthorized('no_key', 'no key')).to.be.instanceOf(published.HttpError)
    expect(source.isRetryable(published.unavailable('later'))).to.equal(true)
    expect(new Error('plain')).to.not.be.instanceOf(source.HttpError)
    expect({ status: 400 }).to.not.be.instanceOf(published.HttpError)
  })

  it('reaches the client as the catalogue says when a plugin on the published copy throws it', async () => {
    const app = new Koa()
    app.use(errorsAndAccessLog(pino({ level: 'silent' })))
    app.use(() => {
      throw new published.HttpError(409, 'validation_error', 'already_exists', 'that key is taken', 'key')
    })
    const server = app.listen(0)
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`)
      expect(response.status).to.equal(409)
      expect(await response.json()).to.deep.equal({
        type: 'validation_error',
        code: 'already_exists',
        detail: 'that key is taken',
        attr: 'key',
      })
    } finally {
      server.close()
    }
  })
})
