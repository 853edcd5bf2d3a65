/**
 * The person routes over real HTTP: `?search=` (distinct id or searchable property prefix) and
 * `?property=&value=` (exact), paged by cursor, every bad input a 400 naming its parameter; the
 * persons are made by capturing events through /batch/.
 */
import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import type { PersonSearchResult } from '../../../plugins/persons/search.ts'

type Result = PersonSearchResult
interface SearchPage {
  results: Result[]
  next: string | null
  searchable_properties: string[]
}

const plugins = (options: Record<string, unknown> = {}) => [
  { plugin: 'validate' },
  { plugin: 'persons', options },
  { plugin: 'sink-mongo', required: true },
]

describe('persons plugin: GET /api/projects/:id/persons search', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: plugins() })
    const people = [
      // 12 persons with an email at shop.test, one of them also found by its distinct id
      ...Array.from({ length: 12 }, (_, i) => ({
        distinct_id: `user-${String(i).padStart(2, '0')}`,
        $set: { email: `ann${String(i).padStart(2, '0')}@shop.test`, name: `Ann ${i}`, plan: 'pro' },
      })),
      { distinct_id: 'ann-by-id', $set: { email: 'ann-by-id@shop.test', name: 'Ann by id' } },
      { distinct_id: 'bob', $set: { email: 'bob@shop.test', name: 'annabel bob' } },
      { distinct_id: 'carl', $set: { email: 'Ann@upper.test' } },
      { distinct_id: 'dora', $set: { email: 'shared@shop.test' } },
      { distinct_id: 'eve', $set: { email: 'shared@shop.test' } },
      { distinct_id: 'frank', $set: { email: ['ann-list@shop.test'] } },
    ]
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: people.map(({ distinct_id, $set }) => ({ event: 'signed_up', distinct_id, properties: { $set } })),
      }),
    })
    expect(response.status).to.equal(200)
    // a second distinct id of one person, found through the first
    const alias = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: [{ event: '$create_alias', distinct_id: 'ann-by-id', properties: { alias: 'ann-by-id-2' } }],
      }),
    })
    expect(alias.status).to.equal(200)
  })
  after(() => t?.close())

  const path = (query: string) => `/api/projects/${t.project.id}/persons?${query}`
  const get = async (query: string) => {
    const response = await t.admin('GET', path(query))
    return { status: response.status, body: (await response.json()) as any }
  }
  const page = async (query: string): Promise<SearchPage> => {
    const { status, body } = await get(query)
    expect(status, JSON.stringify(body)).to.equal(200)
    return body
  }
  /** Every result of a search, following `next` links. */
  const all = async (query: string): Promise<{ results: Result[]; pages: number }> => {
    const results: Result[] = []
    let pages = 0
    for (let url: string | null = `${t.url}${path(query)}`; url; pages++) {
      const response = await fetch(url, { headers: { Authorization: `Bearer ${t.adminKey}` } })
      expect(response.status).to.equal(200)
      const body = (await response.json()) as SearchPage
      results.push(...body.results)
      url = body.next
    }
    return { results, pages }
  }

  it('finds persons whose searchable property starts with the text, ordered by value, with their distinct ids', async () => {
    const body = await page('search=ann0')
    expect(body.searchable_properties).to.deep.equal(['email', 'name'])
    expect(body.results.map((r) => r.matched.value)).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => `ann0${i}@shop.test`),
    )
    const first = body.results[0]!
    expect(first.matched.field).to.equal('email')
    expect(first.distinct_ids).to.deep.equal(['user-00'])
    expect(first.more_distinct_ids).to.equal(false)
    expect(first.properties).to.deep.equal({ email: 'ann00@shop.test', name: 'Ann 0' }) // searchable ones only
    expect(new Date(first.created_at).getTime()).to.be.closeTo(Date.now(), 60_000)
    expect(body.next).to.equal(null)
  })

  it('pages by cursor: every match once, in order, across pages of the given size', async () => {
    const { results, pages } = await all('search=ann&limit=4')
    const listed = results.map((r) => `${r.matched.field}:${r.matched.value}`)
    expect(listed).to.deep.equal([
      // distinct ids first, each person at its smallest matching id
      'distinct_id:ann-by-id',
      // then emails (ann-by-id's is not listed again), case-sensitive
      ...Array.from({ length: 12 }, (_, i) => `email:ann${String(i).padStart(2, '0')}@shop.test`),
      // then names, except persons already listed
      'name:annabel bob',
    ])
    expect(pages).to.equal(4)
    expect(new Set(results.map((r) => r.id)).size).to.equal(results.length)
    expect(results[0]!.distinct_ids).to.deep.equal(['ann-by-id', 'ann-by-id-2'])
  })

  it('lists persons with the same value each once across a page boundary (the cursor holds the person id too)', async () => {
    const { results } = await all('search=shared&limit=1')
    expect(results).to.have.length(2)
    expect(results.map((r) => r.distinct_ids[0]).sort()).to.deep.equal(['dora', 'eve'])
    const exact = await all('property=email&value=shared%40shop.test&limit=1')
    expect(exact.results.map((r) => r.id)).to.deep.equal(results.map((r) => r.id))
  })

  it('finds by distinct id prefix, and by an exact value of a searchable property', async () => {
    const byId = await page('search=user-1')
    expect(byId.results.map((r) => r.matched)).to.deep.equal([
      { field: 'distinct_id', value: 'user-10' },
      { field: 'distinct_id', value: 'user-11' },
    ])
    const exact = await page('property=name&value=Ann%205')
    expect(exact.results.map((r) => r.distinct_ids)).to.deep.equal([['user-05']])
    expect((await page('property=name&value=Ann')).results).to.deep.equal([])
    expect((await page('search=nobody-has-this')).results).to.deep.equal([])
  })

  it('shows the first five distinct ids of a person with more, and says there are more', async () => {
    const aliases = (id: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        event: '$create_alias',
        distinct_id: id,
        properties: { alias: `${id}-${String(i).padStart(2, '0')}` },
      }))
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: [
          { event: 'signed_up', distinct_id: 'gina', properties: { $set: { email: 'gina@many.test' } } },
          { event: 'signed_up', distinct_id: 'hal', properties: { $set: { email: 'hal@many.test' } } },
          ...aliases('gina', 30), // more than a page's single read takes: read on their own
          ...aliases('hal', 6),
        ],
      }),
    })
    expect(response.status).to.equal(200)
    for (const [query, first] of [
      ['property=email&value=gina%40many.test', 'gina'],
      ['search=hal%40', 'hal'],
    ] as const) {
      const [found] = (await page(query)).results
      expect(found!.distinct_ids).to.deep.equal([first, `${first}-00`, `${first}-01`, `${first}-02`, `${first}-03`])
      expect(found!.more_distinct_ids).to.equal(true)
    }
  })

  it('walks past the persons a later source finds again (name = email) to the one it alone finds', async () => {
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: [
          ...Array.from({ length: 60 }, (_, i) => {
            const email = `dup-${String(i).padStart(2, '0')}@twice.test`
            return { event: 'signed_up', distinct_id: `twice-${i}`, properties: { $set: { email, name: email } } }
          }),
          { event: 'signed_up', distinct_id: 'once', properties: { $set: { email: 'once@x.test', name: 'dup-zz' } } },
        ],
      }),
    })
    expect(response.status).to.equal(200)
    const { results, pages } = await all('search=dup-&limit=25')
    expect(pages).to.equal(3)
    expect(results).to.have.length(61)
    expect(results.slice(0, 60).every((r) => r.matched.field === 'email')).to.equal(true)
    expect(results[60]!.matched).to.deep.equal({ field: 'name', value: 'dup-zz' })
  })

  it('keeps ?distinct_id= as it was: one person with all its properties', async () => {
    const { status, body } = await get('distinct_id=user-03')
    expect(status).to.equal(200)
    expect(body.distinct_ids).to.deep.equal(['user-03'])
    expect(body.properties).to.include({ email: 'ann03@shop.test', plan: 'pro' })
  })

  it('refuses a property that is not searchable with a 400 naming it and the option to set', async () => {
    const { status, body } = await get('property=plan&value=pro')
    expect(status).to.equal(400)
    expect(body).to.include({ type: 'validation_error', code: 'invalid_input', attr: 'property' })
    expect(body.detail).to.contain('"plan"').and.contain('searchableProperties')
  })

  for (const [query, attr, code] of [
    ['search=', 'search', 'required'],
    [`search=${'x'.repeat(201)}`, 'search', 'invalid_input'],
    ['search=a&property=email&value=a', 'search', 'invalid_input'],
    ['value=a', 'property', 'required'],
    ['property=email', 'value', 'required'],
    ['property=email&value=', 'value', 'required'],
    ['search=a&limit=0', 'limit', 'invalid_input'],
    ['search=a&limit=101', 'limit', 'invalid_input'],
    ['search=a&limit=ten', 'limit', 'invalid_input'],
    ['search=a&cursor=not-a-cursor', 'cursor', 'invalid_input'],
  ] as const)
    it(`answers ?${query.slice(0, 40)} with a 400 ${code} naming ${attr}`, async () => {
      const { status, body } = await get(query)
      expect(status).to.equal(400)
      expect(body).to.include({ code, attr })
      expect(body.detail).to.be.a('string').and.not.equal('')
    })

  it('refuses a cursor of another search, and answers 404 for an unknown project and 401 without the key', async () => {
    const first = await page('search=ann&limit=2')
    const cursor = new URL(first.next!).searchParams.get('cursor')!
    expect((await page(`search=ann&limit=2&cursor=${cursor}`)).results).to.have.length(2)
    const other = await get(`search=bob&cursor=${cursor}`)
    expect(other.status).to.equal(400)
    expect(other.body.attr).to.equal('cursor')
    const unknown = await t.admin('GET', '/api/projects/999999/persons?search=ann')
    expect(unknown.status).to.equal(404)
    expect((await fetch(`${t.url}${path('search=ann')}`)).status).to.equal(401)
  })
})

describe('persons plugin: the searchableProperties option', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: plugins({ searchableProperties: ['plan'] }) })
  })
  after(() => t?.close())

  it('indexes each searchable property at start, searches it and refuses the others', async () => {
    const indexes = await t.service.storage.db.collection('persons').indexes()
    const search = indexes.find((index) => index.name === 'search_plan')
    expect(search?.key).to.deep.equal({ project_id: 1, 'properties.plan': 1, id: 1 })
    expect(indexes.some((index) => index.name === 'search_email')).to.equal(false)
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: [{ event: 'signed_up', distinct_id: 'p1', properties: { $set: { plan: 'pro', email: 'p@x.test' } } }],
      }),
    })
    expect(response.status).to.equal(200)
    const found = await t.admin('GET', `/api/projects/${t.project.id}/persons?search=pr`)
    expect(((await found.json()) as SearchPage).results.map((r) => r.properties)).to.deep.equal([{ plan: 'pro' }])
    const refused = await t.admin('GET', `/api/projects/${t.project.id}/persons?property=email&value=p%40x.test`)
    expect(refused.status).to.equal(400)
  })

  it('refuses a property name with a dot or a leading $ at start', async () => {
    for (const bad of ['a.b', '$email'])
      await startTestService({ plugins: plugins({ searchableProperties: [bad] }) }).then(
        async (started) => {
          await started.close()
          expect.fail(`started with searchableProperties ["${bad}"]`)
        },
        (error: Error) => expect(error.message).to.contain('searchableProperties'),
      )
  })
})
