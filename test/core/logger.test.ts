import { expect } from 'chai'
import {
  chooseLogFormat,
  createLogger,
  isoTime,
  MIN_REDACTED_KEY_LENGTH,
  prettyLines,
  redactInLogs,
  redactKeys,
  batchedLines,
} from '../../core/logger.ts'

/** A logger writing into an array, one parsed line per entry. */
function capture() {
  const lines: string[] = []
  const logger = createLogger('debug', { write: (line: string) => void lines.push(line) })
  return { logger, lines, text: () => lines.join('') }
}

describe('logger key redaction', () => {
  const secret = 'phs_' + 'S3cretKeyMaterial_-0123456789abcdefghijklmno'
  const generated = 'hra_' + 'GeneratedAdminKey_-0123456789abc'

  it('replaces secret project keys and admin keys wherever they are in a line, and keeps public keys', () => {
    const { logger, text, lines } = capture()
    logger.info(
      {
        path: `/api/projects/${secret}/events`,
        query: `token=${secret}&x=1`,
        nested: { deep: [`Bearer ${generated}`] },
        public: 'phc_public-token-0123456789',
      },
      `tried ${secret}`,
    )
    logger.error({ err: new Error(`no project has key ${secret}x`) }, 'request failed')
    logger.info({ glued: `token${secret}` }, 'glued')
    expect(text()).not.to.include(secret.slice(4)).and.not.to.include(generated.slice(4))
    expect(text()).to.include('phc_public-token-0123456789').and.include('phs_[redacted]').and.include('hra_[redacted]')
    for (const line of lines) expect(() => JSON.parse(line)).not.to.throw()
  })

  it('shows a generated admin key only in the adminApiKey field of its one line', () => {
    const { logger, text } = capture()
    logger.warn(
      { adminApiKey: generated, file: '/data/admin-api-key' },
      'generated an admin API key (shown once; it is kept in the data folder)',
    )
    logger.info({ path: `/x/${generated}`, note: `"adminApiKey":"${generated}"` }, 'request')
    const lines = text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines[0]!.adminApiKey).to.equal(generated)
    expect(lines[1]!.path).to.equal('/x/hra_[redacted]')
    expect(JSON.stringify(lines[1])).not.to.include(generated)
  })

  it('redacts a registered key of any shape, raw, JSON-escaped and URL-encoded', () => {
    const configured = 'my "configured"/admin+key 42'
    redactInLogs(configured)
    const { logger, text } = capture()
    logger.info({ path: `/api/${encodeURIComponent(configured)}`, header: configured }, `key ${configured}`)
    expect(text()).not.to.include('configured')
    expect(text()).not.to.include(encodeURIComponent(configured))
    expect(text().match(/\[redacted\]/g)).to.have.length(3)
  })

  it('leaves keys shorter than the minimum alone rather than garbling every line', () => {
    const short = 'k'.repeat(MIN_REDACTED_KEY_LENGTH - 1)
    redactInLogs(short)
    expect(redactKeys(`{"msg":"${short}"}`)).to.equal(`{"msg":"${short}"}`)
  })
})

describe('logger batchedLines', () => {
  it('writes the lines logged within the flush interval in one write, in order, once it has passed', async () => {
    const writes: string[] = []
    const logger = createLogger('info', batchedLines({ write: (text: string) => writes.push(text) }, 20))
    for (let i = 0; i < 3; i++) logger.info({ i }, 'request')
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).to.deep.equal([])
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(writes).to.have.length(1)
    expect(
      writes[0]!
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { i: number }).i),
    ).to.deep.equal([0, 1, 2])
    logger.info({ i: 3 }, 'request')
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(writes).to.have.length(2)
  })

  it('writes at once when more has been logged than it keeps, and on flush', () => {
    const writes: string[] = []
    const destination = batchedLines({ write: (text: string) => writes.push(text) })
    const logger = createLogger('info', destination)
    for (let i = 0; i < 1000; i++) logger.info({ i, padding: 'x'.repeat(100) }, 'request')
    expect(writes.length).to.be.greaterThan(0)
    destination.flush()
    const lines = writes.join('').trim().split('\n')
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).to.deep.equal([...Array(1000).keys()])
  })
})

describe('logger format', () => {
  it('is pretty at a terminal and JSON elsewhere when left on auto, and what the config says otherwise', () => {
    expect(chooseLogFormat('auto', true)).to.equal('pretty')
    expect(chooseLogFormat('auto', false)).to.equal('json')
    expect(chooseLogFormat('auto', undefined)).to.equal('json')
    expect(chooseLogFormat('json', true)).to.equal('json')
    expect(chooseLogFormat('pretty', false)).to.equal('pretty')
  })

  it('prints one pretty line with the time, level, message and fields, written as it is logged, with keys still redacted', () => {
    const written: string[] = []
    const logger = createLogger('info', prettyLines({ write: (text: string) => written.push(text) }, false))
    const secret = 'phs_' + 'PrettySecretKey_0123456789abcdef'
    logger.info({ url: 'http://127.0.0.1:8000', token: secret }, 'hedgerow is listening')
    expect(written, 'synchronously, one write per line').to.have.length(1)
    expect(written[0]).to.equal(
      `[${written[0].slice(1, 13)}] INFO: hedgerow is listening {"url":"http://127.0.0.1:8000","token":"phs_[redacted]"}\n`,
    )
    expect(written[0]).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\]/)
  })
})

describe('logger isoTime', () => {
  it("writes pino's isoTime field, formatted anew when the millisecond changes", async () => {
    const before = Date.now()
    const field = isoTime()
    const match = /^,"time":"(.+)"$/.exec(field)
    expect(match, field).not.to.equal(null)
    const at = Date.parse(match![1]!)
    expect(new Date(at).toISOString()).to.equal(match![1])
    expect(at).to.be.within(before, Date.now())
    await new Promise((resolve) => setTimeout(resolve, 5))
    const later = Date.parse(/^,"time":"(.+)"$/.exec(isoTime())![1]!)
    expect(later).to.be.greaterThan(at)
  })

  it("stamps the logger's lines with the time they were written", () => {
    const lines: string[] = []
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) })
    const before = Date.now()
    logger.info('one')
    const { time } = JSON.parse(lines[0]!) as { time: string }
    expect(Date.parse(time)).to.be.within(before, Date.now())
  })
})
