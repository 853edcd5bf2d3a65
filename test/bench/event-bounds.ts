/**
 * What one hostile event costs the service: `npx tsx test/bench/event-bounds.ts <scenario> <n>`,
 * scenarios `groups` (n group types in `$groups`), `props` (n event properties), `set`, `set_once`, `unset` (n keys) and
 * `anon_id` (an `$anon_distinct_id` of n characters). Runs the service in this process with the
 * default plugins on the embedded database, posts the event once, and prints the time to the
 * answer, the growth of this process's RSS (peak, sampled every 2 ms), and the ingestion warnings
 * written (count and BSON bytes), after one small event has warmed the service up. Run with `--expose-gc` for steadier RSS figures.
 */
import { calculateObjectSize } from 'bson'
import { startTestService } from '../helpers/service.ts'
import { stopTestMongo } from '../helpers/mongo.ts'
import { defaultPlugins } from '../reliability/helpers/default-plugins.ts'

const [scenario = 'groups', nText = '2000'] = process.argv.slice(2)
const n = Number(nText)

function keys(prefix: string): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}_${i}`, 'v']))
}

function hostileEvent(): Record<string, unknown> {
  const base = { event: 'e', distinct_id: 'attacker' }
  switch (scenario) {
    case 'groups':
      return { ...base, properties: { $groups: keys('type') } }
    case 'props':
      return { ...base, properties: keys('prop') }
    case 'set':
      return { ...base, properties: { $set: keys('key') } }
    case 'set_once':
      return { ...base, properties: { $set_once: keys('key') } }
    case 'unset':
      return { ...base, properties: { $unset: Array.from({ length: n }, (_, i) => `key_${i}`) } }
    case 'anon_id':
      return { ...base, event: '$identify', properties: { $anon_distinct_id: 'a'.repeat(n) } }
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
}

const t = await startTestService({ plugins: defaultPlugins() })
try {
  const body = JSON.stringify({ api_key: t.project.api_token, batch: [hostileEvent()] })
  // a small event first, so that the figures leave out the service's first-request warm-up
  const warmUp = JSON.stringify({
    api_key: t.project.api_token,
    batch: [{ event: 'warm-up', distinct_id: 'someone', properties: { $groups: { company: 'acme' } } }],
  })
  await (
    await fetch(`${t.url}/batch/`, { method: 'POST', body: warmUp, headers: { 'Content-Type': 'application/json' } })
  ).text()
  global.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2)
  const started = performance.now()
  const response = await fetch(`${t.url}/batch/`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json' },
  })
  await response.text()
  const ms = performance.now() - started
  clearInterval(sampler)
  const warnings = await t.service.storage.db.collection('ingestion_warnings').find({}).toArray()
  const warningBytes = warnings.reduce((sum, doc) => sum + calculateObjectSize(doc), 0)
  const mappings = await t.service.storage.db.collection('person_distinct_ids').find({}).toArray()
  const longestId = Math.max(0, ...mappings.map((doc) => String(doc.distinct_id).length))
  console.log(
    `${scenario} n=${n} body=${(body.length / 1024).toFixed(0)} KiB status=${response.status} time=${ms.toFixed(0)} ms ` +
      `rss+${((peak - before) / 2 ** 20).toFixed(0)} MiB warnings=${warnings.length} (${(warningBytes / 1024).toFixed(0)} KiB) ` +
      `types=${warnings
        .map((w) => w.type)
        .filter((v, i, a) => a.indexOf(v) === i)
        .join(',')} longest_distinct_id=${longestId}`,
  )
} finally {
  await t.close()
  await stopTestMongo()
}
