import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startTestService } from '../../helpers/service.ts'
import { uuidv7 } from '../../../core/capture/uuid.ts'
import { readDir } from './read.ts'

describe('sink-ndjson plugin', () => {
  let configDir: string
  before(() => {
    configDir = mkdtempSync(path.join(os.tmpdir(), 'sink-ndjson-plugin-'))
  })
  after(() => rmSync(configDir, { recursive: true, force: true }))

  it('writes stored-event documents, one per line, to a folder relative to the config file', async () => {
    const t = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'sink-ndjson', required: true, options: { dir: './exports', prefix: 'capture' } },
        ],
      },
      { configDir },
    )
    try {
      const uuid = uuidv7()
      const response = await fetch(`${t.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({
          api_key: t.project.api_token,
          event: 'signed up',
          distinct_id: 'nd-1',
          uuid,
          properties: { plan: 'pro' },
        }),
      })
      expect(response.status).to.equal(200)
      const [line] = readDir(path.join(configDir, 'exports'))
      expect(line).to.include({
        uuid,
        event: 'signed up',
        distinct_id: 'nd-1',
        project_id: t.project.id,
        person_mode: 'full',
      })
      expect(line.properties).to.include({ plan: 'pro' })
      expect(Date.parse(line.timestamp as string)).to.be.a('number').and.not.NaN
      expect(Date.parse(line.created_at as string)).to.be.a('number').and.not.NaN
    } finally {
      await t.close()
    }
  })

  it('writes under the data folder when no folder is configured', async () => {
    const t = await startTestService(
      { plugins: [{ plugin: 'validate' }, { plugin: 'sink-ndjson', required: true }] },
      { configDir },
    )
    try {
      const uuid = uuidv7()
      await fetch(`${t.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: t.project.api_token, event: 'e', distinct_id: 'nd-2', uuid }),
      })
      expect(readDir(path.join(t.service.config.storage.dataDir, 'ndjson')).map((l) => l.uuid)).to.deep.equal([uuid])
    } finally {
      await t.close()
    }
  })
})
