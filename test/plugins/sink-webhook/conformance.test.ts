import { sinkConformance, toStoredEvent } from '../../conformance/index.ts'
import sinkWebhook from '../../../plugins/sink-webhook/index.ts'
import type { PluginDefinition } from '../../../core/plugin-api.ts'
import { Receiver } from './receiver.ts'

const SECRET = 'conformance-secret-0123456789'
let receiver: Receiver
before(async () => {
  receiver = await Receiver.start(SECRET)
})
after(() => receiver.close())
let instances = 0
const pathOf = (url: string) => new URL(url).pathname

sinkConformance({
  plugin: sinkWebhook as PluginDefinition,
  // Fast retries, and a queue small enough that a failing optional instance fills it within the suite.
  options: () => ({
    url: receiver.url(`/hooks/${++instances}`),
    secret: SECRET,
    maxRetries: 1,
    initialBackoffMs: 5,
    maxBackoffMs: 20,
    maxBatchEvents: 100,
    maxQueueEvents: 600,
  }),
  invalidOptions: [
    { url: 'ftp://example.com', secret: SECRET },
    { url: 'http://127.0.0.1/', secret: 'short' },
    { url: 'http://127.0.0.1/', secret: SECRET, headers: { 'Bad Header': 'x' } },
    { secret: SECRET },
  ],
  async read({ url }) {
    const unsigned = receiver.delivered(pathOf(url)).filter((d) => !d.signed)
    if (unsigned.length) throw new Error(`${unsigned.length} deliveries without a valid signature`)
    return receiver.events(pathOf(url)).map(toStoredEvent)
  },
  fail: ({ url }) => receiver.plan(pathOf(url), 500, Infinity),
})
