// The admin API as the console uses it. The admin key lives in this tab's sessionStorage only
// (never a cookie, never the URL) and goes out as `Authorization: Bearer`.
const KEY = 'hedgerow.adminKey'

export const adminKey = {
  get: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
}

/** An answer other than 2xx: the service's `{type, code, detail, attr}` body, with the status. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail ?? `the service answered ${status}`)
    this.status = status
    this.code = body?.code ?? null
    this.attr = body?.attr ?? null
  }
}

/** Called when the key stops being accepted (401), so the app can ask for it again. */
let onUnauthorized = () => {}
export function whenUnauthorized(callback) {
  onUnauthorized = callback
}

export async function request(method, path, body, key = adminKey.get(), extraHeaders = {}) {
  const headers = { Authorization: `Bearer ${key}`, ...extraHeaders }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let response
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch {
    throw new ApiError(0, { detail: 'the service cannot be reached' })
  }
  const text = await response.text()
  const json = text ? safeJson(text) : null
  if (response.status === 401 && key === adminKey.get()) onUnauthorized()
  if (!response.ok) throw new ApiError(response.status, json)
  return json
}

function safeJson(text) {
  try {
    return JSON.parse(text)
  } catch {
    return { detail: text.slice(0, 200) }
  }
}

/** Whether `key` is the admin key: true, false (401), or an ApiError for anything else. */
export async function checkKey(key) {
  try {
    await request('GET', '/api/projects', undefined, key)
    return true
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return false
    throw error
  }
}

const projectPath = (projectId) => `/api/projects/${encodeURIComponent(projectId)}`
const cohortPath = (projectId, cohortId) => `${projectPath(projectId)}/cohorts/${encodeURIComponent(cohortId)}/`

export const api = {
  projects: () => request('GET', '/api/projects').then((r) => r.results),
  project: (id) => request('GET', projectPath(id)),
  createProject: (body) => request('POST', '/api/projects', body),
  flags: (projectId, { limit, offset, search }) =>
    request(
      'GET',
      `${projectPath(projectId)}/feature_flags/?limit=${limit}&offset=${offset}&search=${encodeURIComponent(search)}`,
    ),
  flag: (projectId, flagId) => request('GET', `${projectPath(projectId)}/feature_flags/${encodeURIComponent(flagId)}/`),
  createFlag: (projectId, body) => request('POST', `${projectPath(projectId)}/feature_flags/`, body),
  deleteFlag: (projectId, flagId) =>
    request('DELETE', `${projectPath(projectId)}/feature_flags/${encodeURIComponent(flagId)}/`),
  updateFlag: (projectId, flagId, body) =>
    request('PATCH', `${projectPath(projectId)}/feature_flags/${encodeURIComponent(flagId)}/`, body),
  /** #20 audit log: `{results, next}`, or an ApiError 404 on a service without the audit routes. */
  flagHistory: (projectId, flagId) =>
    request(
      'GET',
      `${projectPath(projectId)}/audit?entity_type=feature_flag&entity_id=${encodeURIComponent(flagId)}&limit=100`,
    ),
  restoreFlag: (projectId, flagId, body) =>
    request('POST', `${projectPath(projectId)}/feature_flags/${encodeURIComponent(flagId)}/restore/`, body),
  person: (projectId, distinctId) =>
    request('GET', `${projectPath(projectId)}/persons?distinct_id=${encodeURIComponent(distinctId)}`),
  /** #20 person search: `{results, next, searchable_properties}`; `next` is the URL of the following page. */
  searchPersons: (projectId, text) =>
    request('GET', `${projectPath(projectId)}/persons?search=${encodeURIComponent(text)}`),
  /** The page a search's `next` names, asked of this origin (the service may know itself by another host behind a proxy). */
  personsPage: (next) => {
    const url = new URL(next, location.href)
    return request('GET', url.pathname + url.search)
  },
  group: (projectId, type, key) =>
    request(
      'GET',
      `${projectPath(projectId)}/groups?group_type=${encodeURIComponent(type)}&group_key=${encodeURIComponent(key)}`,
    ),
  events: (projectId, { distinctId, limit }) =>
    request('GET', `${projectPath(projectId)}/events?distinct_id=${encodeURIComponent(distinctId)}&limit=${limit}`),
  createCohort: (projectId, body) => request('POST', `${projectPath(projectId)}/cohorts/`, body),
  cohort: (projectId, cohortId) => request('GET', cohortPath(projectId, cohortId)),
  /** `body` carries the `version` the edit was made against (409 `stale_version` if another). */
  updateCohort: (projectId, cohortId, body) => request('PATCH', cohortPath(projectId, cohortId), body),
  deleteCohort: (projectId, cohortId, version) =>
    request('DELETE', cohortPath(projectId, cohortId), undefined, adminKey.get(), { 'If-Match': `"${version}"` }),
  cohortMembers: (projectId, cohortId, limit) =>
    request('GET', `${cohortPath(projectId, cohortId)}members/?limit=${limit}`),
  addCohortMembers: (projectId, cohortId, distinctIds) =>
    request('POST', `${cohortPath(projectId, cohortId)}members/`, { distinct_ids: distinctIds }),
  removeCohortMembers: (projectId, cohortId, distinctIds) =>
    request('DELETE', `${cohortPath(projectId, cohortId)}members/`, { distinct_ids: distinctIds }),
  /** Every flag of the project, a page of 1000 (the largest the API serves) at a time. */
  allFlags: async (projectId) => {
    const all = []
    for (let offset = 0; ; offset += 1000) {
      const page = await api.flags(projectId, { limit: 1000, offset, search: '' })
      all.push(...page.results)
      if (page.results.length < 1000) return all
    }
  },
  cohorts: (projectId) => request('GET', `${projectPath(projectId)}/cohorts/?limit=1000`).then((r) => r.results),
  ingestionHealth: (projectId) => request('GET', `${projectPath(projectId)}/ingestion/health`),
  ingestionWarnings: (projectId, limit) =>
    request('GET', `${projectPath(projectId)}/ingestion_warnings?limit=${limit}`),
  /** A page of dead letters: the first page's path, or the `next` URL of the one before. */
  deadLetters: (url) => request('GET', url),
  replayDeadLetter: (projectId, id) =>
    request('POST', `${projectPath(projectId)}/dead_letters/${encodeURIComponent(id)}/replay`),
  pipeline: () => request('GET', '/api/pipeline'),
  groupTypes: (projectId) => request('GET', `${projectPath(projectId)}/group_types`).then((r) => r.results),
}

/**
 * Every flag of the project for one visitor: `{flags: [{key, value, payload, reason, detail}],
 * properties}`. `groups` is group type → key, `groupProperties` group type → properties; `ip`, when
 * given, goes to the dry run only (/flags takes the IP of the connection). It uses the admin dry run, `POST /api/projects/:id/feature_flags/evaluate/` (values,
 * reasons with each condition set's verdict, and where each property came from), when the service
 * has it; an older service answers 404 or 405 there, and then this asks `/flags?v=2` with the project's
 * public key, as an SDK would: value, payload and a basic reason, no property sources.
 */
let dryRun = 'unknown'

export async function tryFlags(project, { distinctId, personProperties, groups, groupProperties = {}, ip = '' }) {
  const input = {
    distinct_id: distinctId,
    person_properties: personProperties,
    groups,
    group_properties: groupProperties,
  }
  if (dryRun !== 'missing') {
    try {
      const answer = await request(
        'POST',
        `${projectPath(project.id)}/feature_flags/evaluate/`,
        ip ? { ...input, ip } : input,
      )
      dryRun = 'present'
      return { flags: flagRows(answer), properties: answer.properties ?? null, source: 'dry run' }
    } catch (error) {
      // without the route, the path is taken for the flag id "evaluate": 405 (POST on a read route)
      const absent = error instanceof ApiError && (error.status === 404 || error.status === 405)
      if (!absent || dryRun === 'present') throw error
      dryRun = 'missing'
    }
  }
  const response = await fetch('/flags/?v=2', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: project.api_token, ...input }),
  })
  const json = safeJson(await response.text())
  if (!response.ok) throw new ApiError(response.status, json)
  return { flags: flagRows(json), properties: null, source: '/flags' }
}

function flagRows(body) {
  return Object.entries(body?.flags ?? {})
    .map(([key, flag]) => ({
      key,
      value: flag.value ?? (flag.enabled ? (flag.variant ?? true) : false),
      payload: flag.payload ?? flag.metadata?.payload ?? null,
      reason: flag.reason?.description ?? flag.reason?.code ?? '',
      detail: flag.detail ?? null,
    }))
    .sort((a, b) => a.key.localeCompare(b.key))
}

/**
 * A streaming GET with the admin key (fetch, since EventSource cannot send the Authorization
 * header): the Response, whose body the caller reads; a 401 asks for the key again as request() does.
 */
export async function openStream(path, headers, signal) {
  const key = adminKey.get()
  const response = await fetch(path, { headers: { Authorization: `Bearer ${key}`, ...headers }, signal })
  if (response.status === 401 && key === adminKey.get()) onUnauthorized()
  if (!response.ok) throw new ApiError(response.status, safeJson(await response.text()))
  return response
}

export const liveEventsPath = (projectId, { event, distinctId }) => {
  const query = new URLSearchParams()
  if (event) query.set('event', event)
  if (distinctId) query.set('distinct_id', distinctId)
  const text = query.toString()
  return `${projectPath(projectId)}/events/stream${text ? `?${text}` : ''}`
}
