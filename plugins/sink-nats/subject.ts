/**
 * Subjects for events: a template such as `hedgerow.events.{project}.{event}` filled per event.
 * NATS subject tokens cannot hold whitespace, `.`, `*` or `>`, so the event name is
 * percent-encoded where needed (`Button Clicked` → `Button%20Clicked`, `a.b` → `a%2Eb`): the
 * mapping is reversible and two names never share a subject.
 */
const PLACEHOLDER = /\{([a-z_]+)\}/g
const KNOWN = new Set(['project', 'event'])

/** Printable ASCII other than space, `.`, `*`, `>` and `%` stays as it is. */
export function encodeToken(value: string): string {
  let out = ''
  for (const char of value) {
    const code = char.codePointAt(0)!
    const plain = code > 0x20 && code < 0x7f && char !== '.' && char !== '*' && char !== '>' && char !== '%'
    out += plain
      ? char
      : [...Buffer.from(char)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')
  }
  return out === '' ? '%00' : out
}

export interface SubjectTemplate {
  /** The subject of one event. */
  fill(values: { project: number; event: string }): string
  /** The template with every placeholder as `*`: the filter a stream needs to capture it. */
  readonly filter: string
}

function validSubject(subject: string, wildcards: boolean): boolean {
  return subject.split('.').every((token, i, all) => {
    if (token === '' || /[\s]/.test(token)) return false
    if (token === '*' || token === '>') return wildcards && (token === '*' || i === all.length - 1)
    return !token.includes('*') && !token.includes('>')
  })
}

/** Parses a template; throws naming what is wrong. */
export function subjectTemplate(template: string): SubjectTemplate {
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(name))
      throw new Error(`subject "${template}": unknown placeholder {${name}} (use {project} and {event})`)
  }
  const filter = template.replace(PLACEHOLDER, '*')
  if (
    !validSubject(template.replace(PLACEHOLDER, 'x'), false) ||
    !template.split('.').every((t) => !t.includes('{') || /^\{[a-z_]+\}$/.test(t))
  ) {
    throw new Error(
      `subject "${template}" is not a NATS subject: dot-separated tokens without spaces, "*" or ">", each placeholder a whole token`,
    )
  }
  return {
    filter,
    fill: ({ project, event }) =>
      template.replace(PLACEHOLDER, (_, name: string) => (name === 'project' ? String(project) : encodeToken(event))),
  }
}

/** Whether a stream subject filter (with `*` and a final `>`) captures every subject matching `subject`. */
export function covers(filter: string, subject: string): boolean {
  const f = filter.split('.')
  const s = subject.split('.')
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i
    if (i >= s.length) return false
    if (f[i] !== '*' && f[i] !== s[i]) return false
  }
  return f.length === s.length
}
