/**
 * Built-in plugins that were renamed or merged into another keep working under their old names,
 * so that an operator's config survives an upgrade: each old name is replaced by the plugin it
 * became, with a warning saying what to write instead. Several old names of one plugin (the
 * `alias-resolve` and `person-update` entries of the persons plugin) become one entry, at the
 * place of the first, with the options of all of them.
 */
import type { Logger } from 'pino'
import type { PluginEntry } from './config.ts'
import { ConfigError } from './config.ts'

export interface PluginRename {
  /** The built-in plugin this name is now part of. */
  readonly into: string
  /**
   * Options the new plugin is given when a config names some of its old names but not this one,
   * so that it keeps doing only what the old list did (`person-update` absent: no property updates).
   */
  readonly optionsWhenAbsent?: Readonly<Record<string, unknown>>
}

/**
 * The config's plugin list with old names replaced, as `[index in the config, entry]` pairs (the
 * index names the entry in option errors). Throws a ConfigError when the list names both a plugin
 * and one of its old names, which would enable it twice.
 */
export function applyRenames(
  entries: readonly PluginEntry[],
  renames: Readonly<Record<string, PluginRename>>,
  logger: Logger,
): Array<[number, PluginEntry]> {
  const rename = (entry: PluginEntry) => (Object.hasOwn(renames, entry.plugin) ? renames[entry.plugin] : undefined)
  const listed = new Set(entries.map((entry) => entry.plugin))
  const merged = new Map<string, [number, PluginEntry]>()
  const result: Array<[number, PluginEntry]> = []
  for (const [index, entry] of entries.entries()) {
    const into = rename(entry)?.into
    if (into === undefined) {
      result.push([index, entry])
      continue
    }
    if (listed.has(into))
      throw new ConfigError(
        `plugin "${entry.plugin}"`,
        `/plugins/${index}/plugin`,
        `"${entry.plugin}" is now part of "${into}", which the list already enables: remove this entry (its options go to "${into}")`,
      )
    logger.warn(
      { plugin: entry.plugin, into },
      `plugin "${entry.plugin}" is now part of "${into}": write { "plugin": "${into}" } instead (one entry, with the options of every old one); the old name will be removed in a later version`,
    )
    const first = merged.get(into)
    if (!first) {
      const replaced: [number, PluginEntry] = [index, { ...entry, plugin: into, options: { ...entry.options } }]
      merged.set(into, replaced)
      result.push(replaced)
      continue
    }
    const [, target] = first
    first[1] = {
      ...target,
      id: target.id ?? entry.id,
      required: target.required === true || entry.required === true ? true : target.required,
      optional: target.optional === true && entry.optional === true ? true : undefined,
      options: { ...target.options, ...entry.options },
    }
  }
  for (const [into, pair] of merged) {
    const absent = Object.entries(renames).filter(([name, r]) => r.into === into && !listed.has(name))
    const defaults = Object.assign({}, ...absent.map(([, r]) => r.optionsWhenAbsent))
    pair[1] = withoutUndefined({ ...pair[1], options: { ...defaults, ...pair[1].options } })
  }
  return result
}

/** Entries as the config schema makes them: a flag is absent rather than undefined. */
function withoutUndefined(entry: PluginEntry): PluginEntry {
  return Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as PluginEntry
}
