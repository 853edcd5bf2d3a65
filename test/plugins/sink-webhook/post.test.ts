import { expect } from 'chai'
import v8 from 'node:v8'
import vm from 'node:vm'
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
  const target = (path: string, timeoutMs = 2000, maxResponseBytes = 64 * 1024): PostTarget => ({
    url: receiver.url(path),
    secret: SECRET,
    signatureHeader: 'X-Signature',
    headers: { Authorization: 'Bearer abc' },
    timeoutMs,
    maxResponseBytes,
  })
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as DeliveryError,
    )

  it('posts the body as JSON with the delivery id, a timestamp, a verifiable signature and the extra headers', async () => {
    await postOnce(target('/ok'), 'delivery-1', '{"events":[]}', new AbortController().signal)
    const [delivery] = receiver.delivered('/ok')
    expect(delivery.body).to.equal('{"events":[]}')
    expect(delivery.signed).to.equal(true)
    expect(delivery.headers).to.include({
      'content-type': 'application/json',
      'x-hedgerow-delivery': 'delivery-1',
      authorization: 'Bearer abc',
    })
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
    expect([unavailable?.retryable, limited?.retryable, timeout?.retryable, refused?.retryable]).to.deep.equal([
      true,
      true,
      true,
      false,
    ])
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

  describe('redirects are failed attempts, never followed', () => {
    let elsewhere: Receiver
    before(async () => {
      elsewhere = await Receiver.start(SECRET, 'X-Signature')
    })
    after(() => elsewhere.close())

    for (const status of [307, 308]) {
      it(`a ${status} does not re-post the signed body and the headers to where it points; the attempt fails, retryable`, async () => {
        receiver.plan(`/moved-${status}`, status, 1, 0, { Location: elsewhere.url(`/took-${status}`) })
        const error = await failure(
          postOnce(target(`/moved-${status}`), 'd', '{"events":[1]}', new AbortController().signal),
        )
        expect(error).to.be.instanceOf(DeliveryError)
        expect(error?.retryable).to.equal(true)
        expect(error?.message).to.equal(
          `answered ${status}, a redirect to "${elsewhere.url(`/took-${status}`)}"; redirects are not followed (set url to the receiver's final address)`,
        )
        expect(receiver.attempts(`/moved-${status}`)).to.have.length(1)
        expect(elsewhere.attempts(`/took-${status}`)).to.deep.equal([])
      })
    }

    it('a 303 is not turned into a GET that counts as delivered', async () => {
      receiver.plan('/see-other', 303, 1, 0, { Location: elsewhere.url('/got') })
      const error = await failure(postOnce(target('/see-other'), 'd', '{}', new AbortController().signal))
      expect(error?.message).to.match(/^answered 303, a redirect/)
      expect(error?.retryable).to.equal(true)
      expect(elsewhere.attempts('/got')).to.deep.equal([])
    })
  })

  describe('the response body is read within bounds', () => {
    async function closed(path: string): Promise<number> {
      for (let waited = 0; waited < 5000; waited += 20) {
        const at = receiver.streams(path)[0]?.closedAt
        if (at) return at
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error(`the streamed response to ${path} was never let go`)
    }

    it('reads at most maxResponseBytes of an endless body, then lets go of it; the 200 counts', async () => {
      const cap = 64 * 1024
      receiver.planBody('/endless', 'endless')
      const started = Date.now()
      const answer = await postOnce(target('/endless', 4000, cap), 'd', '{}', new AbortController().signal)
      const elapsed = Date.now() - started
      expect(answer.status).to.equal(200)
      // The read stops at the first chunk that reaches the cap; a chunk is one socket read, at most 64 KiB.
      expect(answer.responseBytes).to.be.within(cap, cap + 64 * 1024)
      expect(elapsed).to.be.below(4000)
      await closed('/endless')
      // What the receiver managed to write before it saw the close: the read plus socket buffers, not a stream.
      expect(receiver.streams('/endless')[0].written).to.be.below(32 * 1024 * 1024)
    })

    it('a body that stalls after the 200 is given up at the attempt deadline; the 200 counts', async () => {
      receiver.planBody('/stall', 'stall')
      const started = Date.now()
      const answer = await postOnce(target('/stall', 300), 'd', '{}', new AbortController().signal)
      expect(answer).to.deep.equal({ status: 200, responseBytes: 1 })
      expect(Date.now() - started).to.be.within(250, 2500)
      await closed('/stall')
    })

    it('maxResponseBytes 0 reads nothing of the body', async () => {
      receiver.planBody('/endless-0', 'endless')
      const answer = await postOnce(target('/endless-0', 4000, 0), 'd', '{}', new AbortController().signal)
      expect(answer.responseBytes).to.equal(0)
      await closed('/endless-0')
    })
  })

  it('keeps its deadline through garbage collections, for the headers and for the body', async () => {
    // fetch follows its signal through a weak reference a collection can cut (nodejs/node#55428).
    v8.setFlagsFromString('--expose-gc')
    const collect = vm.runInNewContext('gc') as () => void
    await postOnce(target('/warm-up'), 'd', '{}', new AbortController().signal)
    receiver.plan('/hang-gc', 0)
    receiver.planBody('/stall-gc', 'stall')
    const collecting = setInterval(collect, 50)
    try {
      const started = Date.now()
      const [hang, stall] = await Promise.all([
        failure(postOnce(target('/hang-gc', 300), 'd', '{}', new AbortController().signal)),
        postOnce(target('/stall-gc', 300), 'd', '{}', new AbortController().signal),
      ])
      expect(hang?.message).to.equal('no answer within 300 ms')
      expect(stall).to.deep.equal({ status: 200, responseBytes: 1 })
      expect(Date.now() - started).to.be.below(5000)
    } finally {
      clearInterval(collecting)
    }
  })
})
