import { expect } from 'chai'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { RotatingFiles } from '../../../plugins/sink-ndjson/files.ts'
import { BufferFullError, NdjsonWriter } from '../../../plugins/sink-ndjson/writer.ts'

describe('sink-ndjson NdjsonWriter', () => {
  let root: string
  let dir: string
  const open: NdjsonWriter[] = []
  const writer = (flushIntervalMs: number, maxBufferBytes = 1024 * 1024) => {
    const w = new NdjsonWriter(
      new RotatingFiles({ dir, prefix: 'events', maxFileBytes: 1 << 20, rotateEveryMs: 3_600_000 }),
      { flushIntervalMs, maxBufferBytes },
      pino({ level: 'silent' }),
    )
    open.push(w)
    return w
  }
  const written = () =>
    existsSync(dir)
      ? readdirSync(dir)
          .sort()
          .map((name) => readFileSync(path.join(dir, name), 'utf8'))
          .join('')
      : ''
  const breakDir = () => {
    rmSync(dir, { recursive: true, force: true })
    writeFileSync(dir, '')
  }
  const repairDir = () => {
    rmSync(dir, { force: true })
    mkdirSync(dir)
  }

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'sink-ndjson-writer-'))
    dir = path.join(root, 'out')
  })
  afterEach(async () => {
    for (const w of open.splice(0)) await w.close()
    rmSync(root, { recursive: true, force: true })
  })

  it('resolves a durable write only once its lines are in the file', async () => {
    const w = writer(60_000)
    await w.write('{"a":1}\n', true)
    expect(written()).to.equal('{"a":1}\n')
  })

  it('writes 50 concurrent durable writes, each exactly once', async () => {
    const w = writer(60_000)
    await Promise.all(Array.from({ length: 50 }, (_, i) => w.write(`{"i":${i}}\n`, true)))
    const lines = written().split('\n').filter(Boolean)
    expect(lines).to.have.length(50)
    expect(new Set(lines).size).to.equal(50)
  })

  it('acknowledges a buffered write at once and writes it on the next flush interval', async () => {
    const w = writer(50)
    await w.write('{"b":1}\n', false)
    expect(written()).to.equal('')
    expect(w.buffered).to.equal(8)
    for (let i = 0; i < 100 && written() === ''; i++) await new Promise((r) => setTimeout(r, 10))
    expect(written()).to.equal('{"b":1}\n')
  })

  it('writes what is buffered when closed', async () => {
    const w = writer(60_000)
    await w.write('{"c":1}\n', false)
    await w.close()
    expect(written()).to.equal('{"c":1}\n')
  })

  it('makes a buffered burst larger than the buffer wait for a flush while the disk is healthy', async () => {
    const w = writer(60_000, 64)
    const line = (n: number) => `{"n":${n},"pad":"${'x'.repeat(20)}"}\n`
    for (let n = 0; n < 5; n++) await w.write(line(n), false)
    expect(w.buffered).to.be.at.most(64)
    await w.close()
    expect(written()).to.equal([0, 1, 2, 3, 4].map(line).join(''))
  })

  it('rejects a durable write that cannot be written, and does not write it later', async () => {
    const w = writer(20)
    breakDir()
    const error = await w.write('{"d":1}\n', true).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).to.be.instanceOf(Error)
    repairDir()
    await w.flush()
    expect(written()).to.equal('')
  })

  it('keeps buffered lines through failed flushes, refuses new ones when full, and writes the kept ones once the disk is back', async () => {
    const w = writer(60_000, 64)
    breakDir()
    await w.write('{"kept":1}\n', false)
    await w.flush().catch(() => undefined)
    expect(w.buffered).to.equal(11)
    const refused = await w.write(`{"big":"${'x'.repeat(60)}"}\n`, false).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(refused).to.be.instanceOf(BufferFullError)
    repairDir()
    await w.flush()
    expect(written()).to.equal('{"kept":1}\n')
    expect(w.buffered).to.equal(0)
  })
})
