import { expect } from 'chai'
import { HttpError } from '../../../../core/errors.ts'
import { readDefinitions } from '../../../../plugins/decide/definitions/import.ts'
import { DefinitionEdits } from '../../../../plugins/decide/store/edits.ts'
import { Generations } from '../../../../plugins/decide/store/generations.ts'
import { replaceDefinitions } from '../../../../plugins/decide/store/replace.ts'
import type { FlagDocument } from '../../../../plugins/decide/store/documents.ts'
import { openTestDb } from './db.ts'
import type { TestDb } from './db.ts'

describe('decide DefinitionEdits', () => {
  let t: TestDb
  let project = 200
  before(async () => {
    t = await openTestDb('decide_edits')
  })
  after(() => t.close())
  beforeEach(() => void project++)

  const now = new Date()
  const newFlag =
    (key: string) =>
    (id: number): Omit<FlagDocument, 'project_id' | 'generation'> => ({
      id,
      key,
      name: null,
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version: 0,
      filters: { groups: [] },
      created_at: now,
      updated_at: now,
    })

  it('creates flags with the next free id on a project without definitions, bumping the version each time', async () => {
    const edits = DefinitionEdits.flags(t.db)
    const generations = new Generations(t.db)
    expect(await generations.live(project)).to.deep.equal({ generation: 0, version: 0 })
    const a = await edits.create(project, newFlag('a'))
    const b = await edits.create(project, newFlag('b'))
    expect([a.id, b.id]).to.deep.equal([1, 2])
    expect(await generations.live(project)).to.deep.equal({ generation: 0, version: 2 })
  })

  it('gives concurrent creations distinct ids', async () => {
    const edits = DefinitionEdits.flags(t.db)
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => edits.create(project, newFlag(`k${i}`))))
    expect(new Set(created.map((f) => f.id)).size).to.equal(6)
  })

  it('continues the ids of imported definitions and edits the live generation', async () => {
    await replaceDefinitions(
      t.db,
      project,
      readDefinitions({ flags: [{ id: 40, key: 'imported', active: true, filters: {} }] }),
    )
    const edits = DefinitionEdits.flags(t.db)
    expect((await edits.create(project, newFlag('new'))).id).to.equal(41)
    const { generation } = await new Generations(t.db).live(project)
    expect(await t.db.collection('feature_flags').countDocuments({ project_id: project, generation })).to.equal(2)
  })

  it('serialises concurrent updates of one document through its version: none is lost', async () => {
    const edits = DefinitionEdits.flags(t.db)
    const { id } = await edits.create(project, newFlag('counted'))
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        edits.update(project, id, (doc) => ({
          ...doc,
          filters: { ...doc.filters, payloads: { ...(doc.filters.payloads ?? {}), [`p${i}`]: i } },
        })),
      ),
    )
    const doc = await edits.get(project, id)
    expect(doc.version).to.equal(8)
    expect(Object.keys(doc.filters.payloads ?? {})).to.have.length(8)
  })

  it('answers 404 for an unknown id and passes on the errors of the change', async () => {
    const edits = DefinitionEdits.flags(t.db)
    expect(await edits.get(project, 999).catch((e: unknown) => e))
      .to.be.instanceOf(HttpError)
      .and.to.have.property('status', 404)
    const { id } = await edits.create(project, newFlag('x'))
    const refusal = new HttpError(409, 'validation_error', 'stale_version', 'no')
    expect(
      await edits
        .update(project, id, () => {
          throw refusal
        })
        .catch((e: unknown) => e),
    ).to.equal(refusal)
    expect((await edits.get(project, id)).version).to.equal(0)
  })
})
