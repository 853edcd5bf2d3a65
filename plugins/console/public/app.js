// The console's shell: the sign-in page until the tab has an admin key, then the header with its
// navigation and the page of the current route in <main>. Each page starts with its <h1>, which
// receives the focus when the route changes, so keyboard and screen-reader users land on it.
import { useEffect, useState } from './vendor/hooks.js'
import { adminKey, request, whenUnauthorized } from './api.js'
import { html, render } from './html.js'
import { match, useRoute } from './router.js'
import { SignIn } from './pages/sign-in.js'
import { ProjectsPage } from './pages/projects.js'
import { ProjectPage } from './pages/project.js'
import { FlagsPage } from './pages/flags.js'
import { FlagEditorPage } from './pages/flag-editor.js'
import { TryFlagsPage } from './pages/try-flags.js'
import { CohortsPage } from './pages/cohorts.js'
import { CohortPage } from './pages/cohort.js'
import { PersonsPage } from './pages/persons.js'
import { HealthPage } from './pages/health.js'
import { PipelinePage } from './pages/pipeline.js'
import { LiveEventsPage } from './pages/live-events.js'

const ROUTES = [
  ['/projects', ProjectsPage],
  ['/projects/:projectId', ProjectPage],
  ['/projects/:projectId/flags', FlagsPage],
  ['/projects/:projectId/flags/new', FlagEditorPage],
  ['/projects/:projectId/flags/:flagId', FlagEditorPage],
  [
    '/projects/:projectId/flags/:flagId/duplicate',
    (params) => html`<${FlagEditorPage} ...${params} duplicate=${true} />`,
  ],
  ['/projects/:projectId/try', TryFlagsPage],
  ['/projects/:projectId/cohorts', CohortsPage],
  ['/projects/:projectId/cohorts/:cohortId', CohortPage],
  ['/projects/:projectId/persons', PersonsPage],
  ['/projects/:projectId/persons/:distinctId', PersonsPage],
  ['/projects/:projectId/health', HealthPage],
  ['/pipeline', PipelinePage],
  ['/projects/:projectId/live', LiveEventsPage],
]

function NotFound() {
  return html`<h1 tabindex="-1">Page not found</h1>
    <p><a href="#/projects">Back to the projects</a></p>`
}

function App() {
  const [signedIn, setSignedIn] = useState(adminKey.get() !== null)
  const [notice, setNotice] = useState('')
  const route = useRoute()
  // the label of the key in use, from GET /api/me where the service has it (null where it does not)
  const [label, setLabel] = useState(null)
  useEffect(() => {
    if (!signedIn) return
    request('GET', '/api/me').then(
      (me) => setLabel(typeof me?.key_label === 'string' ? me.key_label : null),
      () => setLabel(null),
    )
  }, [signedIn])
  useEffect(() => {
    whenUnauthorized(() => {
      adminKey.clear()
      setNotice('The admin key is no longer accepted: sign in again.')
      setSignedIn(false)
    })
  }, [])
  useEffect(() => {
    document.querySelector('main h1')?.focus()
  }, [route, signedIn])

  if (!signedIn) return html`<${SignIn} notice=${notice} onSignedIn=${() => (setNotice(''), setSignedIn(true))} />`

  let page = html`<${NotFound} />`
  const keyLabel = label === null ? null : html`<span class="key-label">Key: ${label}</span>`
  for (const [pattern, Page] of ROUTES) {
    const params = match(pattern, route)
    if (params) {
      page = html`<${Page} key=${route} ...${params} />`
      break
    }
  }
  const signOut = () => {
    adminKey.clear()
    setNotice('Signed out.')
    setSignedIn(false)
  }
  return html`
    <a class="skip-link" href="#main" onClick=${(e) => (e.preventDefault(), document.getElementById('main').focus())}>
      Skip to the page
    </a>
    <header class="bar">
      <span class="brand">Hedgerow</span>
      <nav aria-label="Main">
        <a href="#/projects" aria-current=${route.startsWith('/projects') ? 'page' : undefined}>Projects</a>
        <a href="#/pipeline" aria-current=${route === '/pipeline' ? 'page' : undefined}>Pipeline</a>
      </nav>
      ${keyLabel}
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">${page}</main>
  `
}

render(html`<${App} />`, document.getElementById('app'))
