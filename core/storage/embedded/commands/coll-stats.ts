import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError, MongoServerError, notSupported } from '../errors.ts'
import type { CommandContext } from './context.ts'
import { collectionLatencies } from './latency.ts'
import { storageStats } from './namespaces.ts'

function options(spec: unknown, field: string): Doc {
  if (spec === undefined) return {}
  if (!isPlainObject(spec)) throw mongoError('TypeMismatch', `BSON field '$collStats.${field}' is the wrong type`)
  return spec
}

/**
 * The one document a `$collStats` stage (the first of an aggregation on collection `name`) starts
 * the pipeline with: `latencyStats` (commands/latency.ts), `storageStats` and `count` as asked.
 */
export function collStatsDocument(ctx: CommandContext, db: string, name: string, spec: unknown): Doc {
  if (!isPlainObject(spec))
    throw new MongoServerError(40166, `$collStats must take a nested object but found: ${JSON.stringify(spec)}`)
  const out: Doc = { ns: `${db}.${name}`, host: ctx.info.address, localTime: new Date() }
  for (const field of Object.keys(spec)) {
    if (field === 'latencyStats') {
      const histograms = options(spec.latencyStats, field).histograms ?? false
      if (typeof histograms !== 'boolean')
        throw mongoError('TypeMismatch', "BSON field '$collStats.latencyStats.histograms' is the wrong type")
      out.latencyStats = collectionLatencies(out.ns as string, histograms)
    } else if (field === 'storageStats') {
      options(spec.storageStats, field)
      out.storageStats = storageStats(ctx.catalog, db, name)
    } else if (field === 'count') {
      options(spec.count, field)
      out.count = ctx.catalog.get(db, name)?.size ?? 0
    } else if (field === 'queryExecStats') {
      throw notSupported("the $collStats option 'queryExecStats'")
    } else {
      throw new MongoServerError(40415, `BSON field '$collStats.${field}' is an unknown field.`)
    }
  }
  return out
}
