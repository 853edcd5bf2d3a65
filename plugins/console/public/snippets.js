// Set-up code for PostHog's SDKs, pointed at this service (the origin the console is served from).
// The browser snippet is the one of docs/browser.md: it loads posthog-js from this service's /static.

export function browserSnippet(origin, token) {
  return `<script>
  !function (w, d) {
    if (w.posthog && (w.posthog.__SV || w.posthog.__loaded)) return
    var ph = (w.posthog = [])
    ph._i = []
    ph.people = []
    ph.__SV = 1
    var methods = 'capture identify alias group reset register register_once unregister setPersonProperties ' +
      'getFeatureFlag getFeatureFlagPayload isFeatureEnabled reloadFeatureFlags onFeatureFlags ' +
      'opt_in_capturing opt_out_capturing get_distinct_id'
    methods.split(' ').forEach(function (name) {
      ph[name] = function () { ph.push([name].concat(Array.prototype.slice.call(arguments))) }
    })
    ph.init = function (token, config, name) {
      var script = d.createElement('script')
      script.async = true
      script.crossOrigin = 'anonymous'
      script.src = config.api_host.replace(/\\/+$/, '') + '/static/array.js'
      d.head.appendChild(script)
      ph._i.push([token, config, name])
    }
  }(window, document)
  posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(origin)} })
</script>`
}

export function nodeSnippet(origin, token) {
  return `// npm install posthog-node
import { PostHog } from 'posthog-node'

const posthog = new PostHog(${JSON.stringify(token)}, {
  host: ${JSON.stringify(origin)},
  // the project's secret key: flags are then evaluated locally, without a request each
  personalApiKey: process.env.HEDGEROW_SECRET_KEY,
})

posthog.capture({ distinctId: 'user-1', event: 'signed up' })
const enabled = await posthog.isFeatureEnabled('my-flag', 'user-1')
await posthog.shutdown()`
}

export function pythonSnippet(origin, token) {
  return `# pip install posthog
import os

from posthog import Posthog

posthog = Posthog(${JSON.stringify(token)}, host=${JSON.stringify(origin)},
                  # the project's secret key: flags are then evaluated locally
                  secret_key=os.environ["HEDGEROW_SECRET_KEY"])

posthog.capture("signed up", distinct_id="user-1")
enabled = posthog.evaluate_flags("user-1").is_enabled("my-flag")
posthog.shutdown()`
}
