import { expect } from 'chai'
import { withMergeIdAsDistinctId } from '../../../plugins/persons/merge-id.ts'
import { personEvent } from './fixtures.ts'

describe('the other id of a merge', () => {
  const long = 'a'.repeat(5 * 1024 * 1024)

  it('is cut to 200 characters, as a distinct_id is, on $identify, $create_alias and $merge_dangerously', () => {
    expect(
      withMergeIdAsDistinctId(personEvent({ event: '$identify', properties: { $anon_distinct_id: long, a: 1 } }))
        .properties,
    ).to.deep.equal({ $anon_distinct_id: 'a'.repeat(200), a: 1 })
    for (const name of ['$create_alias', '$merge_dangerously']) {
      expect(
        withMergeIdAsDistinctId(personEvent({ event: name, properties: { alias: long } })).properties,
      ).to.deep.equal({ alias: 'a'.repeat(200) })
    }
  })

  it('counts Unicode scalars and replaces NUL with U+FFFD, as capture does for distinct_id', () => {
    const cut = withMergeIdAsDistinctId(
      personEvent({ event: '$create_alias', properties: { alias: `x\0${'😀'.repeat(300)}` } }),
    )
    expect(cut.properties.alias).to.equal(`x\uFFFD${'😀'.repeat(198)}`)
  })

  it('prints an array the way the merge reads it, and leaves short ids and other events alone', () => {
    expect(
      withMergeIdAsDistinctId(personEvent({ event: '$create_alias', properties: { alias: Array(300).fill('ab') } }))
        .properties.alias,
    ).to.equal(Array(300).fill('ab').join(',').slice(0, 200))
    const short = personEvent({ event: '$create_alias', properties: { alias: ['a', 'b'] } })
    expect(withMergeIdAsDistinctId(short)).to.equal(short)
    const other = personEvent({ event: 'signup', properties: { alias: long, $anon_distinct_id: long } })
    expect(withMergeIdAsDistinctId(other)).to.equal(other)
    const identify = personEvent({ event: '$identify', properties: { $anon_distinct_id: null } })
    expect(withMergeIdAsDistinctId(identify)).to.equal(identify)
  })
})
