/**
 * The TypeBox engine (compiled schemas, first offending path) lives in the plugin contract, so
 * that plugin options, request bodies and the service's config are checked alike.
 */
export { check } from './plugin-api.ts'
