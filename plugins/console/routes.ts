/**
 * `GET /console/` (the page; `/console` redirects there) and `GET /console/<file>` (its modules,
 * styles and the vendored UI library), plus `GET /` → `/console/` when nothing else serves `/`. Every answer carries a
 * Content-Security-Policy that allows scripts, styles and requests from this origin only and no
 * inline script at all, so data shown by the console can never run as code even if a text binding
 * were missed; the page may not be framed. The page is routed by its URL fragment
 * (`/console#/projects/1/flags`), so the server has a single HTML answer.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import { HttpError } from '../../core/plugin-api.ts'
import type { ConsoleAsset, ConsoleAssets } from './assets.ts'

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Frame-Options', 'DENY')
}

function send(ctx: Context, asset: ConsoleAsset): void {
  securityHeaders(ctx)
  // revalidated on every load, so a restarted service with new files is seen at once
  ctx.set('Cache-Control', 'no-cache')
  ctx.set('ETag', asset.etag)
  ctx.vary('Accept-Encoding')
  ctx.type = asset.contentType
  ctx.status = 200 // Koa compares validators (ctx.fresh) only on a 2xx response
  if (ctx.fresh) {
    ctx.status = 304
    return
  }
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip')
    ctx.body = asset.gzipped
  } else {
    ctx.body = asset.body
  }
}

export function mountConsole(router: Router, assets: ConsoleAssets, basePath: string, redirectRoot: boolean): void {
  const home = `${basePath}/`
  // the page's module and style links are relative, so it is always served from the folder path
  // (the router matches a path with or without its trailing slash, so one route answers both)
  router.get(basePath, (ctx) => {
    if (ctx.path === home) send(ctx, assets.get('index.html')!)
    else ctx.redirect(home)
  })
  const file = (ctx: Context) => {
    const name = [ctx.params.folder, ctx.params.name].filter(Boolean).join('/')
    const asset = name === 'index.html' ? undefined : assets.get(name)
    if (!asset) {
      securityHeaders(ctx)
      throw new HttpError(404, 'validation_error', 'not_found', `the console has no file ${name}`)
    }
    send(ctx, asset)
  }
  router.get(`${basePath}/:name`, file)
  router.get(`${basePath}/:folder/:name`, file)

  const rootServed = router.stack.some((layer) => layer.path === '/' && layer.methods.includes('GET'))
  if (redirectRoot && !rootServed) router.get('/', (ctx) => ctx.redirect(home))
}
