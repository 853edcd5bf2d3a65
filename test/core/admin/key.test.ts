import { expect } from 'chai'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { adminKeyring, bearerToken, keyLabel, keysEqual, resolveAdminKey } from '../../../core/admin/key.ts'
import { redactKeys } from '../../../core/logger.ts'

describe('admin key', () => {
  it('generates a key on first start, keeps it in the data folder (0600), and reuses it afterwards', () => {
    const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'hedgerow-key-')), 'data')
    const first = resolveAdminKey(undefined, dataDir)
    expect(first.generated).to.equal(true)
    expect(first.key).to.match(/^hra_[A-Za-z0-9_-]{32}$/)
    expect(readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim()).to.equal(first.key)
    expect(statSync(path.join(dataDir, 'admin-api-key')).mode & 0o777).to.equal(0o600)
    const second = resolveAdminKey(undefined, dataDir)
    expect(second).to.include({ key: first.key, generated: false })
  })

  it('uses the configured key and writes nothing', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-key-'))
    expect(resolveAdminKey('configured-key-0123456789', dataDir)).to.deep.equal({
      key: 'configured-key-0123456789',
      generated: false,
    })
  })

  it('compares keys of any length without throwing, and reads Bearer headers', () => {
    expect(keysEqual('abc', 'abc')).to.equal(true)
    expect(keysEqual('abc', 'abcd')).to.equal(false)
    expect(bearerToken('Bearer  tok ')).to.equal('tok')
    expect(bearerToken('bearer tok')).to.equal('tok')
    expect(bearerToken('Basic tok')).to.equal(undefined)
    expect(bearerToken(undefined)).to.equal(undefined)
  })

  it('registers the resolved key, of any shape, for redaction from the logs', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-key-'))
    const { key } = resolveAdminKey('any-shape-admin-key-0123456789', dataDir)
    expect(redactKeys(`{"path":"/api/${key}"}`)).to.equal('{"path":"/api/[redacted]"}')
  })

  it('names the key a token is among several labelled keys, and refuses two keys under one label or one key under two', () => {
    const keys = adminKeyring({ label: 'admin', key: 'primary-key-0123456789' }, [
      { label: 'alice', key: 'alice-key-0123456789' },
      { label: 'ci-bot', key: 'ci-bot-key-0123456789' },
    ])
    expect(keyLabel('primary-key-0123456789', keys)).to.equal('admin')
    expect(keyLabel('alice-key-0123456789', keys)).to.equal('alice')
    expect(keyLabel('ci-bot-key-0123456789', keys)).to.equal('ci-bot')
    expect(keyLabel('alice-key-012345678', keys)).to.equal(undefined)
    expect(() =>
      adminKeyring({ label: 'admin', key: 'a-key-0123456789xx' }, [{ label: 'admin', key: 'b-key-0123456789xx' }]),
    ).to.throw(/label "admin" is given to two keys/)
    expect(() =>
      adminKeyring({ label: 'admin', key: 'a-key-0123456789xx' }, [{ label: 'bob', key: 'a-key-0123456789xx' }]),
    ).to.throw(/labelled "bob" is also another label's key/)
  })
})
