// Pages are addressed by the URL fragment (`#/projects/1/flags`): one HTML answer serves them all,
// and links, reloads and the back button work without any server-side routing.
import { useEffect, useState } from './vendor/hooks.js'

export function currentRoute() {
  return location.hash.replace(/^#/, '') || '/projects'
}

export function useRoute() {
  const [route, setRoute] = useState(currentRoute())
  useEffect(() => {
    const changed = () => setRoute(currentRoute())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}

export function navigate(path) {
  location.hash = path
}

/** `/projects/:id/flags/:flagId` against a route: the named parts, or null. */
export function match(pattern, route) {
  const names = []
  const regex = new RegExp(
    `^${pattern.replace(/:[a-zA-Z]+/g, (name) => {
      names.push(name.slice(1))
      return '([^/]+)'
    })}$`,
  )
  const found = regex.exec(route)
  if (!found) return null
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1])]))
}
