import { expect } from 'chai'
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RotatingFiles } from '../../../plugins/sink-ndjson/files.ts'

describe('sink-ndjson RotatingFiles', () => {
  let dir: string
  let clock: number
  const now = () => clock
  const files = (options: { maxFileBytes?: number; rotateEveryMs?: number } = {}) =>
    new RotatingFiles(
      {
        dir,
        prefix: 'events',
        maxFileBytes: options.maxFileBytes ?? 1024,
        rotateEveryMs: options.rotateEveryMs ?? 60_000,
      },
      now,
    )
  const listed = () => readdirSync(dir).sort()
  const line = (n: number, pad = 0) => `${JSON.stringify({ n, pad: 'x'.repeat(pad) })}\n`

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sink-ndjson-files-'))
    clock = Date.parse('2026-03-04T05:06:07.890Z')
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('opens no file until the first append, then names it by the UTC time it was opened', async () => {
    const f = files()
    expect(listed()).to.deep.equal([])
    await f.append(line(1))
    expect(listed()).to.deep.equal(['events-20260304T050607Z-000.ndjson'])
    await f.close()
  })

  it('starts a new file before an append would pass maxFileBytes, and gives a larger append a file of its own', async () => {
    const f = files({ maxFileBytes: 100 })
    for (let n = 0; n < 6; n++) await f.append(line(n, 20)) // 38 bytes each: two per file
    await f.append(line(6, 300))
    await f.close()
    const names = listed()
    expect(names).to.deep.equal(['000', '001', '002', '003'].map((seq) => `events-20260304T050607Z-${seq}.ndjson`))
    const sizes = names.map((name) => readFileSync(path.join(dir, name)).length)
    expect(sizes.slice(0, 3).every((size) => size <= 100)).to.equal(true)
    const lines = names.flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean))
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4, 5, 6])
  })

  it('starts a new file when the time period changes, and closes an idle file once its period is over', async () => {
    const f = files({ rotateEveryMs: 3_600_000 })
    await f.append(line(1))
    clock = Date.parse('2026-03-04T05:59:59.999Z')
    await f.append(line(2))
    clock = Date.parse('2026-03-04T06:00:00.000Z')
    await f.append(line(3))
    expect(listed()).to.deep.equal(['events-20260304T050607Z-000.ndjson', 'events-20260304T060000Z-000.ndjson'])
    clock = Date.parse('2026-03-04T07:00:00.000Z')
    await f.rotateIfDue()
    expect(f.currentFile).to.equal(undefined)
    expect(listed()).to.have.length(2)
    await f.close()
  })

  it('starts a new file when the current one was moved away, never writing into the moved file', async () => {
    const f = files()
    await f.append(line(1))
    const moved = path.join(dir, 'shipped.ndjson')
    renameSync(f.currentFile!, moved)
    await f.append(line(2))
    await f.close()
    expect(readFileSync(moved, 'utf8')).to.equal(line(1))
    expect(readFileSync(path.join(dir, 'events-20260304T050607Z-000.ndjson'), 'utf8')).to.equal(line(2))
  })

  it('never overwrites an existing file (a restart within the same second)', async () => {
    const a = files()
    await a.append(line(1))
    await a.close()
    const b = files()
    await b.append(line(2))
    await b.close()
    expect(listed()).to.deep.equal(['events-20260304T050607Z-000.ndjson', 'events-20260304T050607Z-001.ndjson'])
  })

  it('rejects an append it cannot write', async () => {
    const f = files()
    await f.append(line(1))
    rmSync(dir, { recursive: true })
    writeFileSync(dir, 'a file where the folder was')
    const error = await f.append(line(2)).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).to.be.instanceOf(Error)
    await f.close()
  })
})
