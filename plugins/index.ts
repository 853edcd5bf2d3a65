/**
 * The built-in plugins, by the name config uses. A static registry: nothing is discovered by
 * scanning folders, and a name not here is a path or an npm package (core/plugin-resolve.ts).
 */
import type { PluginDefinition } from '../core/plugin-api.ts'
import validate from './validate/index.ts'
import sinkMongo from './sink-mongo/index.ts'
import persons from './persons/index.ts'
import geoip from './geoip/index.ts'
import groupUpdate from './group-update/index.ts'
import spikeDetection from './spike-detection/index.ts'
import decide from './decide/index.ts'
import flagAttribution from './flag-attribution/index.ts'
import staticSdk from './static-sdk/index.ts'
import sinkNdjson from './sink-ndjson/index.ts'
import sinkWebhook from './sink-webhook/index.ts'
import sinkNats from './sink-nats/index.ts'
import consolePlugin from './console/index.ts'

export const builtInPlugins: Readonly<Record<string, PluginDefinition>> = Object.freeze({
  validate: validate as PluginDefinition,
  'sink-mongo': sinkMongo as PluginDefinition,
  persons: persons as PluginDefinition,
  geoip: geoip as PluginDefinition,
  'group-update': groupUpdate as PluginDefinition,
  'spike-detection': spikeDetection as PluginDefinition,
  decide: decide as PluginDefinition,
  'flag-attribution': flagAttribution as PluginDefinition,
  'static-sdk': staticSdk as PluginDefinition,
  'sink-ndjson': sinkNdjson as PluginDefinition,
  'sink-webhook': sinkWebhook as PluginDefinition,
  'sink-nats': sinkNats as PluginDefinition,
  console: consolePlugin as PluginDefinition,
})

/**
 * Old names of built-ins, which configs written for earlier versions still use: the loader loads
 * the plugin they became, with a warning (core/plugin-renames.ts). A list that named
 * `alias-resolve` without `person-update` resolved persons without applying `$set`, and still does.
 */
export const renamedPlugins = Object.freeze({
  'alias-resolve': { into: 'persons' },
  'person-update': { into: 'persons', optionsWhenAbsent: { updateProperties: false } },
})
