import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import path from 'node:path'
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
