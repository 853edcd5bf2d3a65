import { expect } from 'chai'
import {
  FAKE_PERSON_CREATED_AT,
  PERSON_UUID_NAMESPACE,
  personUuid,
  uuidv5,
} from '../../../plugins/persons/person-uuid.ts'

describe('persons: person uuids', () => {
  it('computes RFC 9562 version 5 uuids (the DNS namespace example)', () => {
    expect(uuidv5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).to.equal(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    )
  })

  it('gives the same person uuids as PostHog for "<project_id>:<distinct_id>"', () => {
    expect(PERSON_UUID_NAMESPACE).to.equal('932979b4-65c3-4424-8467-0b66ec27bc22')
    expect(personUuid(1, 'test')).to.equal('246f7a43-5507-564f-b687-793ee3c2dd79')
    expect(personUuid(2, 'test')).to.equal('00ce873a-549c-548e-bbec-cc804a385dd8')
    expect(personUuid(1, 'test2')).to.equal('45c17302-ee44-5596-916a-0eba21f4b638')
  })

  it('hashes the distinct id as UTF-8', () => {
    expect(personUuid(1, 'é')).to.not.equal(personUuid(1, 'e'))
    expect(personUuid(1, 'é')).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('answers remembered uuids per project, the same as computing them, past the memory bound', () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10_050; i++)
        expect(personUuid(1 + (i % 2), `id-${i}`)).to.equal(uuidv5(`${1 + (i % 2)}:id-${i}`, PERSON_UUID_NAMESPACE))
    }
    expect(personUuid(1, 'test')).to.not.equal(personUuid(2, 'test'))
  })

  it('dates the fake person of personless events at 1970-01-01T00:00:05Z', () => {
    expect(FAKE_PERSON_CREATED_AT.toISOString()).to.equal('1970-01-01T00:00:05.000Z')
  })
})
