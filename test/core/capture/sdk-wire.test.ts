/**
 * Every capture request the official SDKs were recorded sending (test/fixtures/sdk-wire),
 * rebuilt into its wire form and run through decodePayload and parseCaptureRequest.
 *
 * The recordings keep the decoded JSON and the decoding steps, not the raw bytes, so each body
 * is rebuilt from them: gzip for `gunzip`, a `data=` form of base64 for `form:data=`+`base64`.
 * For the JavaScript SDKs, which serialise with JSON.stringify, an uncompressed rebuild must come
 * out exactly as long as the recorded body; gzip output differs between compressors.
 */
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { decodePayload } from '../../../core/capture/decode.ts'
import { distinctIdOf } from '../../../core/capture/distinct-id.ts'
import { parseCaptureRequest } from '../../../core/capture/request.ts'
import { computeTimestamp } from '../../../core/capture/timestamp.ts'
import { isUuid } from '../../../core/capture/uuid.ts'

const FIXTURES = new URL('../../fixtures/sdk-wire/', import.meta.url)
const FILES = ['node-requests.jsonl', 'browser-requests.jsonl', 'python-requests.jsonl']
const CAPTURE_PATH = /^\/(e|i\/v0\/e|batch|capture|track|engage)\/?$/
const PROJECT_KEY = 'phc_testprojectkey123'
const limits = { maxBodyBytes: 20 * 1024 * 1024, maxDecodedBytes: 100 * 1024 * 1024 }

interface RecordedRequest {
  seq: number
  method: string
  path: string
  query: Record<string, string>
  headers: Record<string, string>
  body: { bytes: number; steps: string[]; json?: unknown }
}

function recordedCaptures(file: string): RecordedRequest[] {
  return readFileSync(new URL(file, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Partial<RecordedRequest>)
    .filter((line): line is RecordedRequest => typeof line.method === 'string' && line.body?.json !== undefined)
    .filter((line) => CAPTURE_PATH.test(line.path))
}

function rebuildBody(recorded: RecordedRequest): Buffer {
  const json = JSON.stringify(recorded.body.json)
  const steps = recorded.body.steps.join('+')
  if (steps === '') return Buffer.from(json)
  if (steps === 'gunzip') return gzipSync(json)
  if (steps === 'form:data=+base64')
    return Buffer.from(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`)
  throw new Error(`seq ${recorded.seq}: no rebuild for decoding steps ${steps}`)
}

const isJavaScriptSdk = (recorded: RecordedRequest) => !/python/.test(recorded.headers['user-agent'] ?? '')

describe('the recorded SDK capture requests (sdk-wire fixtures)', () => {
  for (const file of FILES) {
    describe(file, () => {
      const requests = recordedCaptures(file)

      it('holds capture requests to replay', () => {
        expect(requests.length).to.be.greaterThan(0)
      })

      for (const recorded of requests) {
        const steps = recorded.body.steps.join('+') || 'plain JSON'
        it(`decodes and parses seq ${recorded.seq}: ${recorded.method} ${recorded.path} (${steps})`, async () => {
          const body = rebuildBody(recorded)
          if (recorded.body.steps.length === 0 && isJavaScriptSdk(recorded)) {
            expect(body.length).to.equal(recorded.body.bytes)
          }
          const text = await decodePayload(
            {
              method: recorded.method,
              path: recorded.path,
              query: recorded.query,
              contentType: recorded.headers['content-type'],
              contentEncoding: recorded.headers['content-encoding'],
              body,
            },
            limits,
          )
          expect(JSON.parse(text)).to.deep.equal(recorded.body.json)

          const request = parseCaptureRequest(text, { path: recorded.path, query: recorded.query })
          const sent = recorded.body.json as { batch: unknown[]; sent_at?: string }
          expect(request.token).to.equal(PROJECT_KEY)
          expect(request.events).to.have.length(sent.batch.length)
          expect(request.sentAt).to.be.instanceOf(Date)

          const now = new Date(Date.parse(sent.sent_at ?? '') + 50)
          for (const event of request.events) {
            expect(event.event).to.be.a('string').and.not.equal('')
            expect(distinctIdOf(event)).to.not.equal('')
            if (event.uuid !== undefined) expect(isUuid(event.uuid as string)).to.equal(true)
            const at = computeTimestamp({
              timestamp: event.timestamp,
              offset: event.offset,
              sentAt: request.sentAt,
              now,
            })
            expect(at.getTime()).to.be.at.most(now.getTime())
          }
        })
      }
    })
  }
})
