/**
 * Generators of capture and flags request bodies for fast-check: JSON of every shape, event-like
 * objects with wrong types in every field, deep nesting, huge strings and arrays, and the same
 * wrapped in every encoding the SDKs use, valid or broken.
 */
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import LZString from 'lz-string'

export interface FuzzRequest {
  path: string
  body: Uint8Array
  headers: Record<string, string>
}

export const PATHS = [
  '/i/v0/e/',
  '/batch/',
  '/e/',
  '/capture/',
  '/track/',
  '/engage/',
  '/flags/?v=2',
  '/decide/?v=3',
  '/flags/?v=2&config=true',
]

const anything = fc.jsonValue({ maxDepth: 4 })
const field = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: anything })
const timestamp = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string(),
  fc.integer(),
  fc.constant('2024-13-45T99:99:99Z'),
)

function eventLike(token: string) {
  return fc.record(
    {
      api_key: field(fc.constant(token)),
      token: field(fc.constant(token)),
      event: field(
        fc.oneof(
          fc.string(),
          fc.constantFrom('$identify', '$pageview', '$groupidentify', '$create_alias', '$set', '$merge_dangerously'),
        ),
      ),
      distinct_id: field(fc.oneof(fc.string(), fc.integer(), fc.constantFrom('anonymous', 'null', '0', 'undefined'))),
      uuid: field(fc.uuid()),
      timestamp: field(timestamp),
      offset: field(fc.integer()),
      properties: field(
        fc.dictionary(
          fc.oneof(
            fc.string(),
            fc.constantFrom(
              '$set',
              '$set_once',
              '$unset',
              '$groups',
              '$group_type',
              '$group_key',
              '$anon_distinct_id',
              'alias',
              '$process_person_profile',
              '__proto__',
              'a.b',
              '$where',
            ),
          ),
          anything,
        ),
      ),
      $set: field(fc.dictionary(fc.string(), anything)),
      sent_at: field(timestamp),
      person_properties: field(fc.dictionary(fc.string(), anything)),
      groups: field(fc.dictionary(fc.string(), anything)),
    },
    { requiredKeys: [] },
  )
}

/**
 * Huge values from a short random seed repeated to a random length: the same sizes as drawing every
 * character (10,000 to 600,000 characters, 1,000 to 20,000 numbers) at a fraction of the cost, which
 * dominated generation in the 100,000-body run. Most are near the small end, as fast-check's
 * default size kept the old ones; one in ten goes up to the maximum.
 */
const repeatTo = <T extends string | unknown[]>(unit: T, length: number): T =>
  (typeof unit === 'string'
    ? unit.repeat(Math.ceil(length / unit.length)).slice(0, length)
    : Array.from({ length }, (_, i) => unit[i % unit.length])) as T
const mostlyNear = (min: number, usual: number, max: number) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.integer({ min, max: usual }) },
    { weight: 1, arbitrary: fc.integer({ min: usual, max }) },
  )
const hugeString = fc
  .tuple(fc.string({ minLength: 1, maxLength: 2_000, unit: 'grapheme-ascii' }), mostlyNear(10_000, 40_000, 600_000))
  .map(([unit, length]) => repeatTo(unit, length))
const hugeArray = fc
  .tuple(fc.array(fc.integer(), { minLength: 1, maxLength: 200 }), mostlyNear(1_000, 2_000, 20_000))
  .map(([unit, length]) => repeatTo(unit, length))

function payload(token: string): fc.Arbitrary<unknown> {
  const event = eventLike(token)
  return fc.oneof(
    { weight: 4, arbitrary: event },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          api_key: field(fc.constant(token)),
          batch: field(fc.array(event, { maxLength: 8 })),
          historical_migration: field(fc.boolean()),
          sent_at: field(timestamp),
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 2, arbitrary: fc.array(event, { maxLength: 8 }) },
    { weight: 1, arbitrary: anything },
    {
      weight: 1,
      arbitrary: fc.record({
        api_key: fc.constant(token),
        event: fc.constant('big'),
        distinct_id: fc.constant('d'),
        properties: fc.record({ s: hugeString, a: hugeArray }),
      }),
    },
  )
}

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'))

type Encoded = Omit<FuzzRequest, 'path'>
const form = { 'Content-Type': 'application/x-www-form-urlencoded' }

/**
 * Every way of sending the text, valid or broken. Each builds its body only when it is drawn: gzip
 * and lz-string of every text, most of them thrown away, were half of the generation time.
 */
const ENCODINGS: Array<(text: string) => fc.Arbitrary<Encoded>> = [
  (text) => fc.constant({ body: utf8(text), headers: { 'Content-Type': 'application/json' } }),
  (text) => fc.constant({ body: new Uint8Array(gzipSync(utf8(text))), headers: { 'Content-Encoding': 'gzip' } }),
  (text) => {
    const gz = gzipSync(utf8(text))
    return fc
      .nat({ max: Math.max(0, gz.length - 1) })
      .map((cut) => ({ body: new Uint8Array(gz.subarray(0, cut)), headers: { 'Content-Encoding': 'gzip' } }))
  },
  (text) => fc.constant({ body: bytes(Buffer.from(text, 'utf8').toString('base64')), headers: {} }),
  (text) =>
    fc.constant({
      body: bytes(`data=${encodeURIComponent(Buffer.from(text, 'utf8').toString('base64'))}&compression=base64`),
      headers: form,
    }),
  (text) =>
    fc.constant({
      body: bytes(`data=${encodeURIComponent(LZString.compressToBase64(text.slice(0, 5_000)))}&compression=lz64`),
      headers: form,
    }),
  (text) =>
    fc.constant({
      body: bytes(`data=${text.slice(0, 5_000)}`),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=latin1' },
    }),
  () => fc.string().map((s) => ({ body: bytes(`data=${encodeURIComponent(s)}&compression=lz64`), headers: form })),
  () => fc.uint8Array({ maxLength: 2_000 }).map((b) => ({ body: b, headers: {} })),
  (text) =>
    fc.uint8Array({ maxLength: 200 }).map((b) => ({
      body: new Uint8Array(
        Buffer.concat([Buffer.from(text, 'utf8').subarray(0, 100), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(b)]),
      ),
      headers: {},
    })),
  (text) =>
    fc
      .constantFrom('gzip', 'deflate', 'br', 'lz64', 'identity, gzip')
      .map((encoding) => ({ body: utf8(text), headers: { 'Content-Encoding': encoding } })),
]

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))

function encodings(text: string): fc.Arbitrary<Encoded> {
  return fc.integer({ min: 0, max: ENCODINGS.length - 1 }).chain((kind) => ENCODINGS[kind]!(text))
}

const queryParam = fc.tuple(
  fc.constantFrom('compression', 'ver', '_', 'sent_at', 'ip', 'data', 'beacon', 'v', 'zzz', '__proto__'),
  fc.string({ maxLength: 20 }),
)

export function fuzzRequest(token: string): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(fc.constantFrom(...PATHS), payload(token), fc.array(queryParam, { maxLength: 3 }))
    .chain(([path, json, query]) => {
      const text = JSON.stringify(json) ?? 'null'
      const extra = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
      const withQuery = extra ? `${path}${path.includes('?') ? '&' : '?'}${extra}` : path
      return encodings(text).map((encoded) => ({ path: withQuery, ...encoded }))
    })
}
