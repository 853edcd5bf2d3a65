/**
 * Compact JSON for callers that keep only a prefix of it (a distinct_id of 200 characters, the
 * excerpt of an event in an ingestion warning): it stops once `limit` characters are written, so
 * a value of a million keys costs what its prefix costs, not what the value does. That also
 * bounds the recursion, because every level of nesting writes at least one character.
 */
export interface BoundedJsonOptions {
  /** Object keys in the order of their UTF-8 bytes (serde_json's BTreeMap order), instead of as sent. */
  readonly sortKeys?: boolean
}

export function boundedJson(
  value: unknown,
  limit = Number.POSITIVE_INFINITY,
  options: BoundedJsonOptions = {},
): string {
  const out: string[] = []
  let length = 0
  const write = (text: string) => {
    out.push(text)
    length += text.length
  }
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      write('[')
      for (let index = 0; index < node.length && length <= limit; index++) {
        if (index > 0) write(',')
        visit(node[index] === undefined ? null : node[index])
      }
      write(']')
    } else if (typeof node === 'object' && node !== null && !(node instanceof Date)) {
      const record = node as Record<string, unknown>
      const keys = Object.keys(record)
      if (options.sortKeys) keys.sort(byCodePoints)
      write('{')
      let first = true
      for (let index = 0; index < keys.length && length <= limit; index++) {
        const item = record[keys[index]!]
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
        if (!first) write(',')
        first = false
        write(`${JSON.stringify(keys[index])}:`)
        visit(item)
      }
      write('}')
    } else {
      write(JSON.stringify(node) ?? 'null')
    }
  }
  visit(value)
  return out.join('')
}

/**
 * UTF-8 byte order is code point order. UTF-16 order agrees with it except between a surrogate
 * (D800–DFFF, the halves of a code point above FFFF) and a unit E000–FFFF, which sorts first in
 * code point order: comparing units with that one correction needs no encoding per comparison.
 */
function byCodePoints(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length)
  for (let index = 0; index < shorter; index++) {
    const x = a.charCodeAt(index)
    const y = b.charCodeAt(index)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000
}
