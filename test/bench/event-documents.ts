/**
 * Stored event documents as the sink writes them (plugins/sink-mongo/document.ts) for posthog-js
 * pageviews: about 30 properties, ~0.9 KB of BSON each, 10,000 users. Deterministic for a given
 * index, so a lookup can name a document that exists. Used by the storage-scale measurements.
 */
import { seeded, USER_COUNT } from './payloads.ts'

const PAGES = [
  '/',
  '/pricing',
  '/docs/getting-started',
  '/blog/launch-week',
  '/signup',
  '/app/dashboard',
  '/app/insights/trends',
]
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge']
const OSES = ['Mac OS X', 'Windows', 'Linux', 'iOS', 'Android']
const START = Date.UTC(2026, 0, 1)

/** The `project_id` of every generated event. */
export const EVENTS_PROJECT = 1

export function uuidOf(i: number): string {
  const hex = i.toString(16).padStart(12, '0')
  return `0190a1b2-c3d4-7e5f-8a9b-${hex}`
}

export function eventDocument(i: number): Record<string, unknown> {
  const random = seeded(i + 1)
  const user = Math.floor(random() * USER_COUNT)
  const page = PAGES[i % PAGES.length]!
  const timestamp = new Date(START + i * 1000)
  return {
    project_id: EVENTS_PROJECT,
    uuid: uuidOf(i),
    event: '$pageview',
    distinct_id: `user-${user}`,
    properties: {
      $current_url: `https://example.com${page}?utm_source=newsletter&ref=${i % 97}`,
      $host: 'example.com',
      $pathname: page,
      $browser: BROWSERS[user % BROWSERS.length],
      $browser_version: 120 + (user % 8),
      $os: OSES[user % OSES.length],
      $os_version: '14.4.1',
      $device_type: user % 5 === 3 ? 'Mobile' : 'Desktop',
      $screen_height: 1080,
      $screen_width: 1920,
      $viewport_height: 947,
      $viewport_width: 1920,
      $lib: 'web',
      $lib_version: '1.200.0',
      $insert_id: `${i.toString(36)}${user.toString(36)}insert`,
      $time: timestamp.getTime() / 1000,
      $device_id: `0190a1b2-device-${user.toString(16).padStart(8, '0')}`,
      $session_id: `0190a1b2-session-${Math.floor(i / 20)
        .toString(16)
        .padStart(8, '0')}`,
      $window_id: `0190a1b2-window-${Math.floor(i / 5)
        .toString(16)
        .padStart(8, '0')}`,
      $pageview_id: uuidOf(i + 1e9),
      $referrer: i % 3 === 0 ? '$direct' : 'https://www.google.com/',
      $referring_domain: i % 3 === 0 ? '$direct' : 'www.google.com',
      $raw_user_agent:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
      $is_identified: user % 2 === 0,
      $process_person_profile: true,
      $configured_session_timeout_ms: 1800000,
      title: `Example — ${page}`,
      $lib_custom_api_host: 'https://analytics.example.com',
      token: 'phc_exampleTokenForStorageScale0123456789',
      $ip: `10.${user % 256}.${(user >> 8) % 256}.${i % 256}`,
    },
    timestamp,
    created_at: new Date(timestamp.getTime() + 150),
    person_mode: 'full',
  }
}

/** The indexes the events collection has (plugins/sink-mongo/index.ts). */
export const EVENT_INDEXES: Array<{ key: Record<string, 1 | -1>; name: string; unique?: boolean }> = [
  { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
  { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
  { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
]
