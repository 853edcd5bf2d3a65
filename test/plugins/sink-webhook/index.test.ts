import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import { uuidv7 } from '../../../core/capture/uuid.ts'
import { Receiver } from './receiver.ts'

const SECRET = 'plugin-test-secret-0123456789'

describe('sink-webhook plugin', () => {
  let receiver: Receiver
  before(async () => {
    receiver = await Receiver.start(SECRET, 'X-Acme-Signature')
  })
  after(() => receiver.close())

  it('posts the kept events of a request as stored-event documents, signed under the configured header', async () => {
    const options = {
      url: receiver.url('/events'),
      secret: SECRET,
      signatureHeader: 'X-Acme-Signature',
      headers: { Authorization: 'Bearer token' },
    }
    const t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'sink-webhook', required: true, options }],
    })
    try {
      const batch = [
        { event: 'a', distinct_id: 'w-1', uuid: uuidv7(), properties: { $browser: 'Safari' } },
        { distinct_id: 'dropped: no name' },
        { event: 'b', distinct_id: 'w-2', uuid: uuidv7() },
      ]
      const response = await fetch(`${t.url}/batch/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: t.project.api_token, batch }),
      })
      expect(response.status).to.equal(200)
      const [delivery] = receiver.delivered('/events')
      expect(delivery.signed).to.equal(true)
      expect(delivery.headers.authorization).to.equal('Bearer token')
      const body = JSON.parse(delivery.body) as {
        delivery_id: string
        sent_at: string
        events: Array<Record<string, unknown>>
      }
      expect(body.delivery_id).to.equal(delivery.headers['x-hedgerow-delivery'])
      expect(Date.parse(body.sent_at)).not.to.be.NaN
      expect(body.events.map((e) => [e.uuid, e.event, e.distinct_id, e.project_id])).to.deep.equal([
        [batch[0].uuid, 'a', 'w-1', t.project.id],
        [batch[2].uuid, 'b', 'w-2', t.project.id],
      ])
      expect(body.events[0].properties).to.include({ $browser: 'Safari' })
    } finally {
      await t.close()
    }
  })

  for (const status of [307, 303]) {
    it(`a ${status} from the receiver is a failed delivery: the request answers 503 and the place it points to gets nothing`, async () => {
      const elsewhere = await Receiver.start(SECRET, 'X-Acme-Signature')
      const path = `/redirecting-${status}`
      receiver.plan(path, status, Infinity, 0, { Location: elsewhere.url('/taken') })
      const options = {
        url: receiver.url(path),
        secret: SECRET,
        signatureHeader: 'X-Acme-Signature',
        headers: { Authorization: 'Bearer token' },
        maxRetries: 1,
        initialBackoffMs: 5,
        maxBackoffMs: 20,
      }
      const t = await startTestService({
        plugins: [{ plugin: 'validate' }, { plugin: 'sink-webhook', required: true, options }],
      })
      try {
        const response = await fetch(`${t.url}/batch/`, {
          method: 'POST',
          body: JSON.stringify({
            api_key: t.project.api_token,
            batch: [{ event: 'a', distinct_id: 'r-1', uuid: uuidv7() }],
          }),
        })
        expect(response.status).to.equal(503)
        expect(receiver.attempts(path).map((a) => a.status)).to.deep.equal([status, status])
        expect(elsewhere.attempts('/taken')).to.deep.equal([])
      } finally {
        await t.close()
        await elsewhere.close()
      }
    })
  }
})
