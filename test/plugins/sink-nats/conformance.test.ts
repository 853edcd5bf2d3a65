import type { NatsConnection } from 'nats'
import { sinkConformance, toStoredEvent } from '../../conformance/index.ts'
import sinkNats from '../../../plugins/sink-nats/index.ts'
import type { PluginDefinition } from '../../../core/plugin-api.ts'
import { NatsServer, readStream } from '../../helpers/nats-server.ts'
import { requireTool } from '../../helpers/requires.ts'

// Inside a describe: hooks at a file's top level would belong to mocha's root suite and start
// nats-server before every other file's tests too.
describe('sink-nats against a real nats-server', () => {
  const server = new NatsServer()
  requireTool('nats-server')
  let reader: NatsConnection
  before(async () => {
    await server.start()
    reader = await server.connect()
  })
  after(async () => {
    await reader?.close()
    await server.close()
  })
  let instances = 0

  sinkConformance({
    plugin: sinkNats as PluginDefinition,
    // A stream and a subject prefix of its own per instance.
    options: () => ({
      servers: server.url,
      stream: `CONFORMANCE_${++instances}`,
      subject: `conformance${instances}.{project}.{event}`,
      ackTimeoutMs: 2000,
    }),
    invalidOptions: [{ stream: 'has.dots' }, { servers: [] }, { createStream: 'yes' }, { ackTimeoutMs: 0 }],
    read: async ({ stream }) => (await readStream(reader, stream)).map((m) => toStoredEvent(m.json)),
    // Without its stream, every publish is answered "no responders".
    async fail({ stream }) {
      await (await reader.jetstreamManager()).streams.delete(stream)
    },
  })
})
