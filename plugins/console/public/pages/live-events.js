// Live events: a project's events as they are stored, newest first. Scrolling the list away from
// its top (or the Pause button) pauses it: new events wait, counted on a "Paused: N new" button
// that shows them. The list keeps the newest MAX_ROWS events, so hours of traffic never grow the
// page. Every value is set as text (htm escapes it), never as HTML.
import { useEffect, useRef, useState } from '../vendor/hooks.js'
import { Component } from '../vendor/preact.js'
import { api } from '../api.js'
import { Loading, ProjectNav, useLoad } from '../common.js'
import { html } from '../html.js'
import { followEvents } from '../live-stream.js'

const MAX_ROWS = 500
/** How often, at most, the live region announces the count of new events. */
const ANNOUNCE_MS = 5000

const STATUS_TEXT = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Connection lost: reconnecting…',
  failed: 'Stopped',
}

/** A row never changes once shown, so it renders again only when opened or closed: 500 rows cost nothing per batch. */
class EventRow extends Component {
  state = { open: false }

  shouldComponentUpdate(props, state) {
    return props.event !== this.props.event || state.open !== this.state.open
  }

  render({ event }, { open }) {
    const detailsId = `live-${event.streamId}`
    return html`<tr>
        <td><time datetime=${event.timestamp}>${new Date(event.timestamp).toLocaleTimeString()}</time></td>
        <th scope="row">${event.event}</th>
        <td><code>${event.distinct_id}</code></td>
        <td>
          <button type="button" aria-expanded=${open} aria-controls=${detailsId} onClick=${() => this.setState({ open: !open })}>
            Details<span class="visually-hidden"> of ${event.event} from ${event.distinct_id}</span>
          </button>
        </td>
      </tr>
      ${
        open &&
        html`<tr id=${detailsId}>
          <td colspan="4" class="live-details">
            <h3>Properties</h3>
            <pre>${JSON.stringify(event.properties ?? {}, null, 2)}</pre>
            <h3>Person</h3>
            <pre>${JSON.stringify({ person_id: event.person_id, person_mode: event.person_mode, properties: event.person_properties }, null, 2)}</pre>
          </td>
        </tr>`
      }`
  }
}

function LiveList({ project, filters }) {
  const [rows, setRows] = useState([])
  const [waiting, setWaiting] = useState([])
  // events arrived while paused: more than the kept `waiting` when over MAX_ROWS arrived
  const [newCount, setNewCount] = useState(0)
  const [paused, setPaused] = useState(false)
  const [status, setStatus] = useState({ state: 'connecting' })
  const [dropped, setDropped] = useState(0)
  const [announcement, setAnnouncement] = useState('')
  const pausedRef = useRef(false)
  const unannounced = useRef(0)
  const listRef = useRef(null)
  pausedRef.current = paused

  useEffect(() => {
    setRows([])
    setWaiting([])
    setNewCount(0)
    // new filters open a new stream: "Live" again only once it is (events stored before are not shown)
    setStatus({ state: 'connecting' })
    const stop = followEvents(project.id, filters, {
      keep: MAX_ROWS,
      onEvents: (events, older) => {
        const newest = events.reverse()
        unannounced.current += newest.length + older
        if (pausedRef.current) {
          setWaiting((w) => [...newest, ...w].slice(0, MAX_ROWS))
          setNewCount((n) => n + newest.length + older)
        } else setRows((r) => [...newest, ...r].slice(0, MAX_ROWS))
      },
      onDropped: (count) => setDropped((d) => d + count),
      onStatus: (state, message) => setStatus({ state, message }),
    })
    const announcer = setInterval(() => {
      if (unannounced.current === 0) return
      setAnnouncement(`${unannounced.current} new ${unannounced.current === 1 ? 'event' : 'events'}`)
      unannounced.current = 0
    }, ANNOUNCE_MS)
    return () => (stop(), clearInterval(announcer))
  }, [project.id, filters.event, filters.distinctId])

  const resume = () => {
    setRows((r) => [...waiting, ...r].slice(0, MAX_ROWS))
    setWaiting([])
    setNewCount(0)
    pause(false)
    if (listRef.current) listRef.current.scrollTop = 0
  }
  // the ref at once, so that events arriving before the next render go to the right list
  const pause = (value) => {
    pausedRef.current = value
    setPaused(value)
  }
  const onScroll = (e) => {
    const away = e.currentTarget.scrollTop > 20
    if (away && !paused) pause(true)
    else if (!away && paused && waiting.length === 0) pause(false)
  }

  return html`
    <div class="toolbar">
      <p class=${`live-status live-${status.state}`} aria-live="polite">
        ${STATUS_TEXT[status.state]}${status.message ? `: ${status.message}` : ''}
      </p>
      ${
        paused
          ? html`<button type="button" class="primary" onClick=${resume}>Paused: ${newCount} new</button>`
          : html`<button type="button" onClick=${() => pause(true)}>Pause</button>`
      }
      <p class="hint">
        Showing ${rows.length} events (the newest ${MAX_ROWS} are kept)${dropped ? `; ${dropped} skipped by the service because the page read too slowly` : ''}.
      </p>
    </div>
    <p role="status" class="visually-hidden">${announcement}</p>
    <div class="live-list" ref=${listRef} onScroll=${onScroll} tabindex="0" role="region" aria-label="Live events list">
      <table>
        <caption>Events as they are stored, newest first</caption>
        <thead>
          <tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Distinct id</th><th scope="col">Properties and person</th></tr>
        </thead>
        <tbody>
          ${rows.map((event) => html`<${EventRow} key=${event.streamId} event=${event} />`)}
        </tbody>
      </table>
      ${rows.length === 0 && html`<p>No event yet: events appear here as they are stored.</p>`}
    </div>
  `
}

export function LiveEventsPage({ projectId }) {
  const project = useLoad(() => api.project(projectId), [projectId])
  const [draft, setDraft] = useState({ event: '', distinctId: '' })
  const [filters, setFilters] = useState({ event: '', distinctId: '' })
  const field = (name) => (e) => setDraft({ ...draft, [name]: e.currentTarget.value })
  return html`<${Loading} state=${project}>
    ${(p) => html`
      <h1 tabindex="-1">Live events of ${p.name}</h1>
      <${ProjectNav} project=${p} current="live" />
      <form class="inline-form" aria-label="Filter live events" onSubmit=${(e) => (e.preventDefault(), setFilters({ event: draft.event.trim(), distinctId: draft.distinctId.trim() }))}>
        <div class="field">
          <label for="live-event">Event name</label>
          <input id="live-event" value=${draft.event} onInput=${field('event')} />
        </div>
        <div class="field">
          <label for="live-distinct-id">Distinct id</label>
          <input id="live-distinct-id" value=${draft.distinctId} onInput=${field('distinctId')} />
        </div>
        <button type="submit">Apply filters</button>
      </form>
      <${LiveList} project=${p} filters=${filters} />
    `}
  <//>`
}
