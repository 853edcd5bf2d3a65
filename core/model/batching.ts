/**
 * The contract's `api.batching` (plugin-api.ts, Batching): the coalescer and find the core's own
 * groups reads use, handed to plugins so the persons plugin, and a third party's, read the same way.
 */
import type { Batching } from '../plugin-api.ts'
import { Coalescer, byProject } from './coalesce.ts'
import { findAll } from './find-all.ts'

export const batching: Batching = Object.freeze<Batching>({
  coalescer: (id, load, options) => new Coalescer(id, load, options),
  byProject,
  findAll,
})
