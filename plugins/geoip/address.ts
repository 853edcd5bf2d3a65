/**
 * Which client addresses are worth a lookup. Private, loopback, link-local, documentation and other
 * special-purpose ranges (IANA's special-purpose registries) locate nothing, or locate the wrong
 * place (a proxy, an office LAN), so they are skipped instead of looked up.
 */
import { BlockList, isIP } from 'node:net'

const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i
const MAPPED_V4_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i

function hexToDotted(high: string, low: string): string {
  const h = parseInt(high, 16)
  const l = parseInt(low, 16)
  return `${h >> 8}.${h & 255}.${l >> 8}.${l & 255}`
}

/**
 * The address in the form the databases are searched with, or undefined when `value` is not an
 * IP address. Accepts `[v6]` brackets and `%zone` suffixes; IPv4-mapped IPv6 (`::ffff:1.2.3.4`,
 * what a dual-stack socket reports) becomes plain IPv4.
 */
export function normaliseIp(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  let ip = value.trim()
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1)
  const zone = ip.indexOf('%')
  if (zone > 0) ip = ip.slice(0, zone)
  const mapped = MAPPED_V4.exec(ip)
  const mappedHex = MAPPED_V4_HEX.exec(ip)
  if (mapped) ip = mapped[1]
  else if (mappedHex) ip = hexToDotted(mappedHex[1], mappedHex[2])
  return isIP(ip) ? ip : undefined
}

/** Whether a normalised address is globally routable, i.e. could be in a geolocation database. */
export function isPublicIp(ip: string): boolean {
  const family = isIP(ip)
  if (family === 0) return false
  return !NOT_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6')
}
