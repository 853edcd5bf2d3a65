// Preact with htm: components are tagged templates, so the console runs as plain ES modules
// without a build step, and every `${value}` in a template is set as text (escaped), never as HTML.
import { h, render } from './vendor/preact.js'
import htm from './vendor/htm.js'

export const html = htm.bind(h)
export { render }
