/**
 * A minimal MaxMind DB writer (https://maxmind.github.io/MaxMind-DB/) for test databases in
 * MaxMind's own GeoIP2 City layout, which no npm package ships. Only what the fixtures need:
 * an IPv6 tree (IPv4 under ::/96, as GeoLite2 has it), 24-bit records, strings, doubles, unsigned
 * integers (whole non-negative numbers; every other number is a double), maps and arrays. The file is read back by the real `maxmind` reader.
 */
import { isIP } from 'node:net'

export type MmdbValue = string | number | MmdbValue[] | { [key: string]: MmdbValue }

const TYPE = { string: 2, double: 3, uint16: 5, uint32: 6, map: 7, uint64: 9, array: 11 } as const

function control(type: number, size: number): Buffer {
  const extended = type > 7
  const head = [((extended ? 0 : type) << 5) | (size < 29 ? size : size < 285 ? 29 : 30)]
  if (extended) head.push(type - 7)
  if (size >= 29 && size < 285) head.push(size - 29)
  else if (size >= 285) head.push((size - 285) >> 8, (size - 285) & 255)
  return Buffer.from(head)
}

function unsigned(type: number, value: number): Buffer {
  const bytes: number[] = []
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256)
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)])
}

export function encode(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([control(TYPE.string, bytes.length), bytes])
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      const bytes = Buffer.alloc(8)
      bytes.writeDoubleBE(value)
      return Buffer.concat([control(TYPE.double, 8), bytes])
    }
    return unsigned(value < 65_536 ? TYPE.uint16 : value < 2 ** 32 ? TYPE.uint32 : TYPE.uint64, value)
  }
  if (Array.isArray(value)) return Buffer.concat([control(TYPE.array, value.length), ...value.map(encode)])
  const entries = Object.entries(value)
  return Buffer.concat([control(TYPE.map, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])])
}

function networkBits(cidr: string): number[] {
  const [address, prefixText] = cidr.split('/')
  const family = isIP(address)
  if (!family) throw new Error(`not a network: ${cidr}`)
  const prefix = Number(prefixText) + (family === 4 ? 96 : 0)
  const bytes = family === 4 ? [...new Array(12).fill(0), ...address.split('.').map(Number)] : expandV6(address)
  return bytes.flatMap((byte) => [7, 6, 5, 4, 3, 2, 1, 0].map((shift) => (byte >> shift) & 1)).slice(0, prefix)
}

function expandV6(address: string): number[] {
  const [head, tail = ''] = address.split('::')
  const words = (part: string) => (part ? part.split(':').map((w) => parseInt(w, 16)) : [])
  const left = words(head)
  const right = words(tail)
  const all = address.includes('::') ? [...left, ...new Array(8 - left.length - right.length).fill(0), ...right] : left
  return all.flatMap((w) => [w >> 8, w & 255])
}

interface TreeNode {
  children: [TreeNode | number | undefined, TreeNode | number | undefined]
}

/** The bytes of an .mmdb file mapping each network to its record. */
export function writeMmdb(
  networks: ReadonlyArray<readonly [string, MmdbValue]>,
  databaseType = 'GeoLite2-City',
): Buffer {
  const data: Buffer[] = []
  let dataSize = 0
  const root: TreeNode = { children: [undefined, undefined] }
  for (const [cidr, record] of networks) {
    const offset = dataSize
    const encoded = encode(record)
    data.push(encoded)
    dataSize += encoded.length
    const bits = networkBits(cidr)
    let node = root
    bits.forEach((bit, i) => {
      if (i === bits.length - 1) node.children[bit] = offset
      else {
        const next = node.children[bit]
        if (typeof next === 'object') node = next
        else node = node.children[bit] = { children: [undefined, undefined] }
      }
    })
  }
  const nodes: TreeNode[] = []
  const number = new Map<TreeNode, number>()
  for (const queue = [root]; queue.length; ) {
    const node = queue.shift() as TreeNode
    number.set(node, nodes.push(node) - 1)
    for (const child of node.children) if (typeof child === 'object') queue.push(child)
  }
  const nodeCount = nodes.length
  const tree = Buffer.alloc(nodeCount * 6)
  nodes.forEach((node, i) => {
    node.children.forEach((child, side) => {
      const value =
        child === undefined
          ? nodeCount
          : typeof child === 'number'
            ? nodeCount + 16 + child
            : (number.get(child) as number)
      tree.writeUIntBE(value, i * 6 + side * 3, 3)
    })
  })
  const metadata = encode({
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000,
    database_type: databaseType,
    description: { en: 'Hedgerow test database' },
    ip_version: 6,
    languages: ['en'],
    node_count: nodeCount,
    record_size: 24,
  })
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...data,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com'),
    metadata,
  ])
}
