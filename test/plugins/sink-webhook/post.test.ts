import { expect } from 'chai'
import { DeliveryError, postOnce, signature } from '../../../plugins/sink-webhook/post.ts'
import type { PostTarget } from '../../../plugins/sink-webhook/post.ts'
import { Receiver } from './receiver.ts'

const SECRET = 'post-test-secret-0123456789'

describe('sink-webhook postOnce', () => {
  let receiver: Receiver
  before(async () => {
    receiver = await Receiver.start(SECRET, 'X-Signature')
  })
  after(() => receiver.close())
  const target = (path: string, timeoutMs = 2000): PostTarget => ({ url: receiver.url(path), secret: SECRET, signatureHeader: 'X-Signature', headers: { Authorization: 'Bearer abc' }, timeoutMs })
  const failure = (promise: Promise<void>) => promise.then(() => undefined, (error: unknown) => error as DeliveryError)

  it('posts the body as JSON with the delivery id, a timestamp, a verifiable signature and the extra headers', async () => {
    await postOnce(target('/ok'), 'delivery-1', '{"events":[]}', new AbortController().signal)
    const [delivery] = receiver.delivered('/ok')
    expect(delivery.body).to.equal('{"events":[]}')
    expect(delivery.signed).to.equal(true)
    expect(delivery.headers).to.include({ 'content-type': 'application/json', 'x-hedgerow-delivery': 'delivery-1', authorization: 'Bearer abc' })
    expect(Number(delivery.headers['x-hedgerow-timestamp'])).to.be.closeTo(Date.now() / 1000, 5)
  })

  it('signs "<timestamp>.<body>" with HMAC-SHA256, so a changed body or timestamp does not verify', () => {
    const good = signature(SECRET, '1700000000', '{"a":1}')
    expect(good).to.match(/^sha256=[0-9a-f]{64}$/)
    expect(signature(SECRET, '1700000001', '{"a":1}')).not.to.equal(good)
    expect(signature(SECRET, '1700000000', '{"a":2}')).not.to.equal(good)
    expect(signature('another-secret-0123456789', '1700000000', '{"a":1}')).not.to.equal(good)
  })

  it('treats 5xx, 408 and 429 as retryable (with Retry-After), other 4xx as refused', async () => {
    receiver.plan('/codes', 503)
    receiver.plan('/codes', 429, 1, 0, { 'Retry-After': '2' })
    receiver.plan('/codes', 408)
    receiver.plan('/codes', 400)
    const signal = new AbortController().signal
    const unavailable = await failure(postOnce(target('/codes'), 'd', '{}', signal))
    const limited = await failure(postOnce(target('/codes'), 'd', '{}', signal))
    const timeout = await failure(postOnce(target('/codes'), 'd', '{}', signal))
    const refused = await failure(postOnce(target('/codes'), 'd', '{}', signal))
    expect([unavailable?.retryable, limited?.retryable, timeout?.retryable, refused?.retryable]).to.deep.equal([true, true, true, false])
    expect(limited?.retryAfterMs).to.equal(2000)
    expect(refused?.message).to.equal('answered 400')
  })

  it('gives up on a receiver that does not answer within the timeout, as a retryable failure', async () => {
    receiver.plan('/hang', 0)
    const started = Date.now()
    const error = await failure(postOnce(target('/hang', 150), 'd', '{}', new AbortController().signal))
    expect(error).to.be.instanceOf(DeliveryError)
    expect(error?.message).to.equal('no answer within 150 ms')
    expect(error?.retryable).to.equal(true)
    expect(Date.now() - started).to.be.within(140, 1500)
  })

  it('fails as retryable when nothing listens', async () => {
    const closed = await Receiver.start(SECRET)
    const url = closed.url('/')
    await closed.close()
    const error = await failure(postOnce({ ...target('/'), url }, 'd', '{}', new AbortController().signal))
    expect(error?.retryable).to.equal(true)
    expect(error?.message).to.match(/^request failed/)
  })
})
