/**
 * static-sdk: serves the browser SDK from the installed `posthog-js` package, so that the HTML
 * snippet (`api_host` pointing here) loads `/static/array.js` and its lazily loaded extensions
 * from this service instead of PostHog's CDN. Upgrading the package upgrades what pages get.
 * Turned off with `enabled: false` (or by leaving it out of the plugin list), e.g. when a CDN or
 * the site itself serves the SDK.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { SdkAssets } from './assets.ts'
import { mountStaticSdk } from './routes.ts'

export const optionsSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    /** The npm package whose `dist` folder is served; it must be installed next to the service. */
    package: Type.String({ minLength: 1, default: 'posthog-js' }),
    /** Cache lifetime of unversioned paths such as /static/array.js, which change on upgrade. */
    maxAgeSeconds: Type.Integer({ minimum: 0, default: 3600 }),
    /** Cache lifetime of /static/<version>/… paths, whose bytes never change. */
    versionedMaxAgeSeconds: Type.Integer({ minimum: 0, default: 31_536_000 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'static-sdk',
  apiVersion: API_VERSION,
  optionsSchema,
  setup(api, options) {
    if (!options.enabled) {
      api.logger.info('disabled: /static/array.js is not served')
      return
    }
    const assets = new SdkAssets(options.package, import.meta.url)
    api.logger.info(
      { package: options.package, version: assets.version },
      'serving the browser SDK at /static/array.js',
    )
    api.hooks.routes.tap({ name: api.id }, (router) => mountStaticSdk(router, assets, options))
  },
})
