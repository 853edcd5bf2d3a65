import { isPlainObject, type Doc } from '../bson/codec.ts'
import { ErrorCode, mongoError, MongoServerError, notSupported } from '../errors.ts'
import { validateExpression, validateFieldPath } from './update-pipeline.ts'

/** Stages mingo runs with MongoDB's meaning. */
const SUPPORTED = new Set([
  '$addFields',
  '$bucket',
  '$bucketAuto',
  '$count',
  '$densify',
  '$documents',
  '$facet',
  '$fill',
  '$graphLookup',
  '$group',
  '$limit',
  '$lookup',
  '$match',
  '$project',
  '$redact',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$set',
  '$setWindowFields',
  '$skip',
  '$sort',
  '$sortByCount',
  '$unionWith',
  '$unset',
  '$unwind',
])

/** Stages MongoDB has and this server does not run (mingo's $out/$merge write elsewhere). */
const MONGODB_ONLY = new Set([
  '$out',
  '$merge',
  '$indexStats',
  '$currentOp',
  '$listSessions',
  '$listLocalSessions',
  '$planCacheStats',
  '$geoNear',
  '$search',
  '$searchMeta',
  '$vectorSearch',
  '$changeStreamSplitLargeEvent',
  '$listSearchIndexes',
  '$listSampledQueries',
  '$shardedDataDistribution',
  '$querySettings',
  '$listClusterCatalog',
])

/**
 * Checks an aggregation pipeline before running it, so that what mingo would run differently
 * from MongoDB (or not at all) is refused with an error naming the stage.
 */
export function validatePipeline(pipeline: unknown, dbLevel: boolean): Doc[] {
  if (!Array.isArray(pipeline)) throw mongoError('TypeMismatch', "'pipeline' option must be specified as an array")
  pipeline.forEach((stage, i) => {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      throw new MongoServerError(40323, 'A pipeline stage specification object must contain exactly one field.')
    }
    const [name] = Object.keys(stage)
    const spec = stage[name]
    if (name === '$changeStream' || name === '$collStats') {
      // (as the first stage, the aggregate command answers them before this check)
      throw new MongoServerError(40602, `${name} is only valid as the first stage in a pipeline.`)
    }
    if (MONGODB_ONLY.has(name)) throw notSupported(`the ${name} aggregation stage`)
    if (!SUPPORTED.has(name))
      throw new MongoServerError(ErrorCode.Location40324, `Unrecognized pipeline stage name: '${name}'`)
    if (name === '$documents' && (!dbLevel || i !== 0)) {
      throw mongoError(
        'InvalidNamespace',
        '$documents may only be used as the first stage of a collectionless aggregate ({aggregate: 1})',
      )
    }
    if ((name === '$set' || name === '$addFields') && isPlainObject(spec)) {
      for (const path of Object.keys(spec)) validateFieldPath(path)
    }
    if (name === '$facet' && isPlainObject(spec)) {
      for (const sub of Object.values(spec)) validatePipeline(sub, false)
    }
    if ((name === '$lookup' || name === '$unionWith') && isPlainObject(spec) && Array.isArray(spec.pipeline)) {
      validatePipeline(spec.pipeline, false)
    }
    validateExpression(spec)
  })
  const first = pipeline.length > 0 ? Object.keys(pipeline[0] as Doc)[0] : 'an empty pipeline'
  if (dbLevel && first !== '$documents') {
    throw mongoError('InvalidNamespace', `{aggregate: 1} is not valid for '${first}'; a collection is required.`)
  }
  return pipeline as Doc[]
}
