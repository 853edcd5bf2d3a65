import { expect } from 'chai'
import { pino } from 'pino'
import { startTestService } from '../helpers/service.ts'

describe('createService', () => {
  it('logs the resolved order of every tap at start, in one info line: stages first, then config order', async () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    // listed before validate: their Stage constants still put them where they must run
    const t = await startTestService(
      {
        plugins: [
          { plugin: 'spike-detection' },
          { plugin: 'group-update' },
          { plugin: 'validate' },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { logger },
    )
    try {
      const logged = lines.filter((line) => line.msg === 'hooks tapped, in the order they run')
      expect(logged).to.have.length(1)
      expect(logged[0]).to.include({ level: 30 })
      expect(logged[0]!.taps).to.deep.equal({
        routes: ['group-update'],
        ready: [],
        validate: ['validate', 'spike-detection', 'group-update'],
        geoip: [],
        aliasResolve: ['group-update'],
        personUpdate: [],
        groupUpdate: ['group-update'],
        flagAttribution: [],
        sink: ['sink-mongo'],
        eventDropped: [],
        stepFailed: [],
        closing: [],
      })
    } finally {
      await t.close()
    }
  })
})
