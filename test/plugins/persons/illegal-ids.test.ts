import { expect } from 'chai'
import { isIllegalDistinctId } from '../../../plugins/persons/illegal-ids.ts'

describe('persons: illegal distinct ids', () => {
  it('refuses empty and whitespace-only ids', () => {
    for (const id of ['', ' ', '\t\n']) expect(isIllegalDistinctId(id), JSON.stringify(id)).to.equal(true)
  })

  it('refuses the case-insensitive list in any case, bare or quoted', () => {
    for (const id of [
      'anonymous',
      'Anonymous',
      'GUEST',
      'distinctid',
      'distinct_id',
      'ID',
      'not_authenticated',
      'Email',
      'uNdEfInEd',
      'TRUE',
      'false',
      "'guest'",
      '"Anonymous"',
    ]) {
      expect(isIllegalDistinctId(id), id).to.equal(true)
    }
  })

  it('refuses the case-sensitive list only in its exact case, bare or quoted', () => {
    for (const id of ['[object Object]', 'NaN', 'None', 'none', 'null', '0', "'null'", '"NaN"', "'0'"])
      expect(isIllegalDistinctId(id), id).to.equal(true)
    for (const id of ['nan', 'NULL', 'Null', 'NONE', '[object object]'])
      expect(isIllegalDistinctId(id), id).to.equal(false)
  })

  it('does not trim before the list check, so padded ids are legal', () => {
    for (const id of [' guest', 'null ', ' 0']) expect(isIllegalDistinctId(id), JSON.stringify(id)).to.equal(false)
  })

  it('accepts ordinary ids', () => {
    for (const id of ['user-1', '00', 'guest-42', 'anonymous_1', '01890000-0000-7000-8000-000000000001'])
      expect(isIllegalDistinctId(id), id).to.equal(false)
  })
})
