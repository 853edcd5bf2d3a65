import { expect } from 'chai'
import { covers, encodeToken, subjectTemplate } from '../../../plugins/sink-nats/subject.ts'

describe('sink-nats subjects', () => {
  it('keeps plain event names and percent-encodes what a NATS token cannot hold', () => {
    expect(encodeToken('$pageview')).to.equal('$pageview')
    expect(encodeToken('Button Clicked')).to.equal('Button%20Clicked')
    expect(encodeToken('a.b*c>d%e')).to.equal('a%2Eb%2Ac%3Ed%25e')
    expect(encodeToken('tab\there')).to.equal('tab%09here')
    expect(encodeToken('ünï')).to.equal('%C3%BCn%C3%AF')
    expect(encodeToken('')).to.equal('%00')
  })

  it('gives two different names two different subjects', () => {
    const names = ['a.b', 'a_b', 'a%2Eb', 'a b', 'a%20b']
    expect(new Set(names.map(encodeToken)).size).to.equal(names.length)
  })

  it('fills {project} and {event} and derives the stream filter', () => {
    const t = subjectTemplate('hedgerow.events.{project}.{event}')
    expect(t.fill({ project: 12, event: 'Signed Up' })).to.equal('hedgerow.events.12.Signed%20Up')
    expect(t.filter).to.equal('hedgerow.events.*.*')
    expect(subjectTemplate('all-events').fill({ project: 1, event: 'x' })).to.equal('all-events')
  })

  it('refuses unknown placeholders, partial-token placeholders and invalid subjects', () => {
    expect(() => subjectTemplate('e.{team}')).to.throw(/unknown placeholder \{team\}/)
    expect(() => subjectTemplate('e.p{project}')).to.throw(/not a NATS subject/)
    expect(() => subjectTemplate('e..{event}')).to.throw(/not a NATS subject/)
    expect(() => subjectTemplate('e.*.{event}')).to.throw(/not a NATS subject/)
    expect(() => subjectTemplate('e f.{event}')).to.throw(/not a NATS subject/)
  })

  it('tells whether a stream filter captures a subject filter', () => {
    expect(covers('hedgerow.events.*.*', 'hedgerow.events.*.*')).to.equal(true)
    expect(covers('hedgerow.>', 'hedgerow.events.*.*')).to.equal(true)
    expect(covers('>', 'a')).to.equal(true)
    expect(covers('hedgerow.events.1.*', 'hedgerow.events.*.*')).to.equal(false)
    expect(covers('hedgerow.events.*', 'hedgerow.events.*.*')).to.equal(false)
    expect(covers('hedgerow.events.*.*.*', 'hedgerow.events.*.*')).to.equal(false)
    expect(covers('hedgerow.events.>', 'hedgerow.events')).to.equal(false)
  })
})
