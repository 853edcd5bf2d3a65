/**
 * The real posthog-python, in capture_mode="v1", against the running service: every event it
 * sends, with each compression it offers, is stored once, with the $set applied and $lib taken
 * from PostHog-Sdk-Info; a wrong key reaches its on_error as a 401.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { expect } from 'chai'
import { POSTHOG_PYTHON_DIR, posthogPython } from '../../helpers/python.ts'
import { requireTool } from '../../helpers/requires.ts'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

function send(
  python: string,
  url: string,
  key: string,
  compression: string,
  prefix: string,
  count: number,
): Promise<{ errors: Array<{ status: number | null; message: string }> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      python,
      [path.join(POSTHOG_PYTHON_DIR, 'send_v1.py'), url, key, compression, prefix, String(count)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`send_v1.py exited ${code}: ${err}`))
      resolve(JSON.parse(out.trim().split('\n').pop() as string))
    })
  })
}

describe('posthog-python capture v1 against the service', function () {
  this.timeout(240_000)
  let t: TestService
  let python: string
  requireTool('posthog-python')
  before(async () => {
    const env = posthogPython()
    if ('skipped' in env) throw new Error(env.skipped)
    python = env.python
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'persons' }, { plugin: 'sink-mongo', required: true }],
    })
  })
  after(async () => t?.close())

  for (const compression of ['none', 'gzip', 'deflate']) {
    it(`stores every event sent with compression ${compression}, once, with its $set applied`, async () => {
      const prefix = `py-${compression}`
      const result = await send(python, t.url, t.project.api_token, compression, prefix, 25)
      expect(result.errors).to.deep.equal([])
      const events = (await storedEvents(t)).filter((e) => String(e.distinct_id).startsWith(prefix))
      expect(events.filter((e) => e.event === 'v1 event')).to.have.length(25)
      expect(events.filter((e) => e.event === '$set')).to.have.length(1)
      expect(new Set(events.map((e) => e.uuid)).size).to.equal(events.length)
      const sample = events.find((e) => e.event === 'v1 event') as { properties: Record<string, unknown> }
      expect(sample.properties.$lib).to.equal('posthog-python')
      expect(sample.properties.$session_id).to.equal('session-1')
      const person = await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=${prefix}-0`)
      expect(((await person.json()) as { properties: Record<string, unknown> }).properties).to.include({
        plan: 'pro',
        email: `${prefix}@example.com`,
      })
    })
  }

  it('reports a wrong project key to on_error as a 401, and stores nothing', async () => {
    const result = await send(python, t.url, 'phc_not_a_project_key', 'gzip', 'py-wrong-key', 3)
    expect(result.errors.map((e) => e.status)).to.deep.equal([401])
    expect((await storedEvents(t)).filter((e) => String(e.distinct_id).startsWith('py-wrong-key'))).to.deep.equal([])
  })
})
