import { expect } from 'chai'
import vm from 'node:vm'
import type { TestService } from '../../../helpers/service.ts'
import { putDefinitions, startDecideService } from './fixtures.ts'
import { remoteConfigScript } from '../../../../plugins/decide/http/remote-config.ts'

describe('decide remote config for posthog-js', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
  })
  after(() => t.close())

  const config = async () =>
    (await (await fetch(`${t.url}/array/${t.project.api_token}/config`)).json()) as Record<string, unknown>

  it('serves JSON with the compression posthog-js may use and whether the project has flags', async () => {
    expect(await config()).to.deep.include({
      token: t.project.api_token,
      supportedCompression: ['gzip', 'gzip-js'],
      hasFeatureFlags: false,
      analytics: { endpoint: '/i/v0/e/' },
    })
    await putDefinitions(t, { flags: [{ id: 1, key: 'on', active: true, filters: {} }] })
    expect(await config()).to.include({ hasFeatureFlags: true })
  })

  it('serves config.js, a script that sets window._POSTHOG_REMOTE_CONFIG[token] where posthog-js reads it', async () => {
    const response = await fetch(`${t.url}/array/${t.project.api_token}/config.js`)
    expect(response.status).to.equal(200)
    expect(response.headers.get('content-type')).to.match(/^application\/javascript/)
    const window: {
      _POSTHOG_REMOTE_CONFIG?: Record<string, { config: Record<string, unknown>; siteApps: unknown[] }>
    } = {}
    vm.runInNewContext(await response.text(), { window })
    expect(window._POSTHOG_REMOTE_CONFIG?.[t.project.api_token]?.config).to.deep.equal(await config())
    expect(window._POSTHOG_REMOTE_CONFIG?.[t.project.api_token]?.siteApps).to.deep.equal([])
  })

  it('answers 404 for an unknown key, so posthog-js falls back to /flags', async () => {
    expect((await fetch(`${t.url}/array/phc_nobody/config.js`)).status).to.equal(404)
    expect((await fetch(`${t.url}/array/phc_nobody/config`)).status).to.equal(404)
  })

  it('escapes what would end a script element', () => {
    expect(remoteConfigScript({ x: '</script><script>alert(1)</script>' }, 'phc_a')).to.not.include('</script>')
  })
})
