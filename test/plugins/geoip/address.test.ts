import { expect } from 'chai'
import { isPublicIp, normaliseIp } from '../../../plugins/geoip/address.ts'

describe('geoip address', () => {
  it('normalises brackets, zone ids and IPv4-mapped IPv6 (dotted and hex) to the searchable form', () => {
    expect(normaliseIp(' 8.8.8.8 ')).to.equal('8.8.8.8')
    expect(normaliseIp('[2001:4860:4860::8888]')).to.equal('2001:4860:4860::8888')
    expect(normaliseIp('fe80::1%eth0')).to.equal('fe80::1')
    expect(normaliseIp('::ffff:81.2.69.142')).to.equal('81.2.69.142')
    expect(normaliseIp('::FFFF:808:808')).to.equal('8.8.8.8')
  })

  it('rejects what is not an address', () => {
    for (const value of ['', 'garbage', '1.2.3', '256.1.1.1', '8.8.8.8:443', 42, null, undefined, {}])
      expect(normaliseIp(value), String(value)).to.equal(undefined)
  })

  it('treats private, loopback, link-local, CGNAT, documentation, multicast and reserved IPv4 as not public', () => {
    for (const ip of [
      '0.1.2.3',
      '10.0.0.1',
      '100.64.0.1',
      '127.0.0.1',
      '169.254.1.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.2.1',
      '192.168.1.1',
      '198.18.0.1',
      '198.51.100.7',
      '203.0.113.9',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
    ]) {
      expect(isPublicIp(ip), ip).to.equal(false)
    }
  })

  it('treats unspecified, loopback, unique-local, link-local, documentation and multicast IPv6 as not public', () => {
    for (const ip of [
      '::',
      '::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fec0::1',
      '2001:db8::1',
      '3fff::1',
      'ff02::1',
      '100::1',
    ])
      expect(isPublicIp(ip), ip).to.equal(false)
  })

  it('treats routable addresses as public, including the edges of private ranges', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '172.15.255.255',
      '100.128.0.1',
      '2001:4860:4860::8888',
      '2a00:1450:4001:82b::200e',
    ])
      expect(isPublicIp(ip), ip).to.equal(true)
  })
})
