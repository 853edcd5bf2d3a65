/**
 * The contract's `api.batching` (plugin-api.ts, Batching): the coalescer, find and cache the core's
 * own groups reads use, handed to plugins so the persons plugin, and a third party's, read the same way.
 */
import type { Batching } from '../plugin-api.ts'
import { Coalescer, byProject } from './coalesce.ts'
import { findAll } from './find-all.ts'
import { DocumentCache } from './watched-cache.ts'

export const batching: Batching = Object.freeze<Batching>({
  coalescer: (id, load, options) => new Coalescer(id, load, options),
  byProject,
  findAll,
  watchedCache: (collection, options) => new DocumentCache(collection, options),
})
