import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

describe('group-update admin routes', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'group-update' }, { plugin: 'sink-mongo', required: true }],
    })
    const batch = Array.from({ length: 5 }, (_, i) => ({
      event: '$groupidentify',
      distinct_id: `g${i}`,
      properties: { $group_type: 'company', $group_key: `key-${i}`, $group_set: { n: i } },
    }))
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: t.project.api_token, batch }),
    })
    expect(response.status).to.equal(200)
  })
  after(() => t.close())

  const get = async (path: string, auth = true) => {
    const response = auth ? await t.admin('GET', path) : await fetch(t.url + path)
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it('pages through the groups of a type in key order', async () => {
    const first = await get(`/api/projects/${t.project.id}/groups?group_type=company&limit=2`)
    expect((first.body.results as Array<{ group_key: string }>).map((g) => g.group_key)).to.deep.equal([
      'key-0',
      'key-1',
    ])
    const seen = [...(first.body.results as Array<{ group_key: string }>)]
    let next = first.body.next as string | null
    for (let page = 0; next && page < 5; page++) {
      const response = await t.admin('GET', new URL(next).pathname + new URL(next).search)
      const body = (await response.json()) as { results: Array<{ group_key: string }>; next: string | null }
      seen.push(...body.results)
      next = body.next
    }
    expect(seen.map((g) => g.group_key)).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-4'])
  })

  it('answers an empty list for a type never seen, and 404 for an unknown group or project', async () => {
    expect((await get(`/api/projects/${t.project.id}/groups?group_type=nobody`)).body).to.deep.equal({
      results: [],
      next: null,
    })
    expect((await get(`/api/projects/${t.project.id}/groups?group_type=company&group_key=missing`)).status).to.equal(
      404,
    )
    expect((await get(`/api/projects/999999/group_types`)).status).to.equal(404)
  })

  it('answers 400 without group_type or with a bad limit, and 401 without the admin key', async () => {
    expect((await get(`/api/projects/${t.project.id}/groups`)).body).to.include({
      type: 'validation_error',
      attr: 'group_type',
    })
    expect((await get(`/api/projects/${t.project.id}/groups?group_type=company&limit=0`)).status).to.equal(400)
    expect((await get(`/api/projects/${t.project.id}/group_types`, false)).status).to.equal(401)
  })
})
