/** The plugin list of config/default.json, so these tests see every route and step a default install has. */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { ROOT_DIR } from '../../helpers/service.ts'

export function defaultPlugins(): Array<Record<string, unknown>> {
  const config = JSON.parse(readFileSync(path.join(ROOT_DIR, 'config', 'default.json'), 'utf8')) as {
    plugins: Array<Record<string, unknown>>
  }
  return config.plugins
}
