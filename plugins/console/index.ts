/**
 * console: the operator console, a web page served by the service itself at `/console` (and `/`
 * redirects there). It is a client of the admin API like any other: it keeps the admin key in the
 * tab's sessionStorage and sends it as a Bearer token, so it needs no route of its own beyond its
 * files. See docs/console.md.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { ConsoleAssets } from './assets.ts'
import { mountConsole } from './routes.ts'

export const optionsSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    /** Where the console is served; a path of one or more segments, without a trailing slash. */
    path: Type.String({ pattern: '^(/[a-z0-9_-]+)+$', default: '/console' }),
    /** Redirect `GET /` to the console, unless another plugin serves `/`. */
    redirectRoot: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'console',
  apiVersion: API_VERSION,
  optionsSchema,
  setup(api, options) {
    if (!options.enabled) {
      api.logger.info('disabled: the console is not served')
      return
    }
    const assets = new ConsoleAssets(import.meta.url)
    api.logger.info({ path: options.path }, `serving the console at ${options.path}`)
    api.hooks.routes.tap({ name: api.id }, (router) => mountConsole(router, assets, options.path, options.redirectRoot))
  },
})
