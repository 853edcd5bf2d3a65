/**
 * `GET /static/array.js` and the other SDK files, at the two paths posthog-js uses:
 *   /static/<file>            (the snippet; extensions as `/static/surveys.js?v=<version>`)
 *   /static/<version>/<file>  (extensions under `strict_script_versioning`, posthog-js's default)
 * A versioned path names exact bytes, so it is cached for a year as immutable and only the
 * installed version is served (posthog-js then falls back to the unversioned path). Unversioned
 * files change when the package is upgraded, so they are cached briefly and revalidated by ETag.
 * The routes are cross-origin (`crossOrigin`: the snippet loads array.js with crossorigin="anonymous");
 * Cross-Origin-Resource-Policy lets pages that require it (COEP) load the scripts too.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import { crossOrigin, httpError } from '../../core/plugin-api.ts'
import type { SdkAsset, SdkAssets } from './assets.ts'

export interface StaticRouteOptions {
  readonly maxAgeSeconds: number
  readonly versionedMaxAgeSeconds: number
}

const notFound = (detail: string) => httpError('not_found', detail)

function acceptsGzip(ctx: Context): boolean {
  return ctx.acceptsEncodings('gzip', 'identity') === 'gzip'
}

function send(ctx: Context, asset: SdkAsset, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl)
  ctx.set('ETag', asset.etag)
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin')
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.vary('Accept-Encoding')
  ctx.type = asset.contentType
  ctx.status = 200 // Koa only compares validators (ctx.fresh) on a 2xx response
  if (ctx.fresh) {
    ctx.status = 304
    return
  }
  if (acceptsGzip(ctx)) {
    ctx.set('Content-Encoding', 'gzip')
    ctx.body = asset.gzipped
  } else {
    ctx.body = asset.body
  }
}

export function mountStaticSdk(router: Router, assets: SdkAssets, options: StaticRouteOptions): void {
  const shortCache = `public, max-age=${options.maxAgeSeconds}`
  const longCache = `public, max-age=${options.versionedMaxAgeSeconds}, immutable`

  router.get('/static/:file', crossOrigin, (ctx) => {
    const asset = assets.get(String(ctx.params.file))
    if (!asset) throw notFound(`no SDK file ${ctx.params.file} in posthog-js ${assets.version}`)
    send(ctx, asset, shortCache)
  })

  router.get('/static/:version/:file', crossOrigin, (ctx) => {
    const version = String(ctx.params.version)
    if (version !== assets.version) throw notFound(`this server serves posthog-js ${assets.version}, not ${version}`)
    const asset = assets.get(String(ctx.params.file))
    if (!asset) throw notFound(`no SDK file ${ctx.params.file} in posthog-js ${assets.version}`)
    send(ctx, asset, longCache)
  })
}
