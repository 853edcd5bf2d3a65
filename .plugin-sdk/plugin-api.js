// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.
/** The loader refuses plugins built against another version of this contract. */
export const API_VERSION = 1;
export function drop(reason, details) {
    return Object.freeze({ dropped: true, reason, details });
}
export function isDropped(value) {
    return typeof value === 'object' && value !== null && value.dropped === true;
}
/** Identity function that gives plugin authors type inference for their options. */
export function definePlugin(definition) {
    return definition;
}
/** What `crossOrigin` carries, found by the core's CORS (a symbol of the global registry, so the published copy of this file marks routes the same way). */
export const CROSS_ORIGIN = Symbol.for('hedgerow.crossOrigin');
/**
 * Put first among a route's handlers when browsers call it from pages of other sites (capture,
 * /flags, OFREP): the route answers CORS permissively, as PostHog's public endpoints do — the
 * Origin echoed with credentials, or `*` without one — preflights included. Routes without it
 * answer cross-origin only to the operator's `server.adminCorsOrigins`.
 */
export const crossOrigin = Object.assign(function crossOrigin(ctx, next) {
    grantCrossOrigin(ctx);
    return next();
}, { [CROSS_ORIGIN]: true });
/** The headers of a granted cross-origin response. */
export function grantCrossOrigin(ctx) {
    const origin = ctx.get('Origin');
    if (origin) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Credentials', 'true');
        ctx.vary('Origin');
    }
    else {
        ctx.set('Access-Control-Allow-Origin', '*');
    }
}
