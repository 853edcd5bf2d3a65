import { expect } from 'chai'
import path from 'node:path'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import { writeMaxMindCityFixture } from './fixtures.ts'

describe('geoip plugin', () => {
  it('reads a MaxMind City file named by databasePath, relative to the config folder', async () => {
    const file = writeMaxMindCityFixture()
    const t = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'geoip', options: { databasePath: path.basename(file) } },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { configDir: path.dirname(file) },
    )
    try {
      const body = JSON.stringify({
        api_key: t.project.api_token,
        event: '$pageview',
        distinct_id: 'londoner',
        properties: { $ip: '81.2.69.142' },
      })
      expect((await fetch(`${t.url}/i/v0/e/`, { method: 'POST', body })).status).to.equal(200)
      const [event] = await storedEvents(t, '&distinct_id=londoner')
      expect(event.properties).to.include({
        $geoip_city_name: 'London',
        $geoip_subdivision_1_code: 'ENG',
        $geoip_subdivision_2_name: 'Greater London',
        $geoip_postal_code: 'EC2V',
        $geoip_accuracy_radius: 10,
      })
    } finally {
      await t.close()
    }
  })

  it('refuses to boot when databasePath does not exist', async () => {
    let error: unknown
    await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'geoip', options: { databasePath: '/nonexistent/City.mmdb' } },
        { plugin: 'sink-mongo', required: true },
      ],
    }).catch((e: unknown) => (error = e))
    expect(error).to.be.instanceOf(Error)
    expect(String((error as Error).message)).to.match(/geoip/i)
  })
})
