import { expect } from 'chai'
import { applyOperations } from '../../../plugins/persons/property-ops.ts'
import type { OperationOptions } from '../../../plugins/persons/property-ops.ts'

const options = (over: Partial<OperationOptions> = {}): OperationOptions => ({
  event: 'e',
  skipFilteredWrites: true,
  setOnceFillsNull: true,
  ignoreUnset: false,
  ...over,
})
const ops = (over: { set?: object; setOnce?: object; unset?: string[] }) => ({
  set: { ...over.set },
  setOnce: { ...over.setOnce },
  unset: over.unset ?? [],
})
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>

describe('persons: property operations', () => {
  it('$set_once only fills keys the person does not have', () => {
    const result = applyOperations({ a: 1 }, ops({ setOnce: { a: 2, b: 3 } }), options())
    expect(plain(result.properties)).to.deep.equal({ a: 1, b: 3 })
    expect(result).to.include({ changed: true, write: true })
  })

  it('$set_once fills a stored null with a non-null value, unless that rule is off', () => {
    expect(plain(applyOperations({ a: null }, ops({ setOnce: { a: 'x' } }), options()).properties)).to.deep.equal({
      a: 'x',
    })
    expect(applyOperations({ a: null }, ops({ setOnce: { a: null } }), options()).changed).to.equal(false)
    expect(
      plain(
        applyOperations({ a: null }, ops({ setOnce: { a: 'x' } }), options({ setOnceFillsNull: false })).properties,
      ),
    ).to.deep.equal({ a: null })
  })

  it('$set wins over $set_once for a key in both', () => {
    expect(
      plain(applyOperations({}, ops({ set: { k: 'set' }, setOnce: { k: 'once' } }), options()).properties),
    ).to.deep.equal({ k: 'set' })
  })

  it('reports no change when $set values equal the stored ones, objects and arrays included', () => {
    const result = applyOperations({ a: 1, o: { x: [1, 2] } }, ops({ set: { a: 1, o: { x: [1, 2] } } }), options())
    expect(result).to.include({ changed: false, write: false })
  })

  it('$unset removes present keys only, and is ignored at creation', () => {
    const result = applyOperations({ a: 1, b: 2 }, ops({ unset: ['a', 'missing'] }), options())
    expect(plain(result.properties)).to.deep.equal({ b: 2 })
    expect(result.write).to.equal(true)
    expect(applyOperations({ a: 1 }, ops({ unset: ['missing'] }), options()).changed).to.equal(false)
    expect(
      plain(applyOperations({ a: 1 }, ops({ unset: ['a'] }), options({ ignoreUnset: true })).properties),
    ).to.deep.equal({ a: 1 })
  })

  it('does not write when only fast-changing keys changed, but shows the change', () => {
    const result = applyOperations(
      { $current_url: '/a', $browser: 'Firefox' },
      ops({ set: { $current_url: '/b' } }),
      options({ event: '$pageview' }),
    )
    expect(result).to.include({ changed: true, write: false })
    expect(result.properties.$current_url).to.equal('/b')
  })

  it('writes a fast-changing key that is new, or that changes next to another key, or on person events', () => {
    expect(applyOperations({}, ops({ set: { $current_url: '/b' } }), options()).write).to.equal(true)
    expect(
      applyOperations(
        { $current_url: '/a', plan: 'free' },
        ops({ set: { $current_url: '/b', plan: 'pro' } }),
        options(),
      ).write,
    ).to.equal(true)
    for (const event of ['$identify', '$set', '$create_alias', '$merge_dangerously']) {
      expect(
        applyOperations({ $current_url: '/a' }, ops({ set: { $current_url: '/b' } }), options({ event })).write,
        event,
      ).to.equal(true)
    }
    expect(
      applyOperations(
        { $current_url: '/a' },
        ops({ set: { $current_url: '/b' } }),
        options({ skipFilteredWrites: false }),
      ).write,
    ).to.equal(true)
  })

  it('stores hostile keys as data and reads only own keys of the person', () => {
    const set = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": "c", "a.b": 1, "$browser": "x"}',
    ) as Record<string, unknown>
    const result = applyOperations({}, { set, setOnce: JSON.parse('{"toString": "once"}'), unset: [] }, options())
    expect(Object.keys(result.properties).sort()).to.deep.equal([
      '$browser',
      '__proto__',
      'a.b',
      'constructor',
      'toString',
    ])
    expect(result.properties.__proto__).to.deep.equal({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })
})
