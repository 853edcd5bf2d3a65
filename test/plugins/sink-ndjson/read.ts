import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** Every line of every file in a sink-ndjson folder, oldest file first. */
export function readDir(dir: string): Array<Record<string, unknown>> {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .sort()
    .flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}
