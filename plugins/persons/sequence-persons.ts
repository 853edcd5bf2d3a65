/**
 * The persons a sequence of events (`EventContext.sequence`: those of one distinct_id in one
 * request, run one after another) last read or wrote, so that the next event of the sequence
 * starts from them instead of reading its person again.
 *
 * This keeps capture.md's rules because every person write checks the version it started from: if
 * another process wrote the person meanwhile, the write is refused and the writer re-reads, and
 * the fresh person is kept from then on. An event that writes nothing shows the person as the
 * sequence last saw it, which is what it would have shown had the other process's write come just
 * after it; the two requests were in flight together, so either order is one PostHog could give.
 * Merges change which person an id belongs to, so a merge event forgets everything first.
 */
import type { EventContext } from '../../core/plugin-api.ts'
import type { PersonDocument } from './person-store.ts'

const KEY = 'persons:sequence'
/**
 * Persons kept at most per sequence. A sequence is one distinct_id's events, so one person (two
 * around a merge), except in a historical migration, where every event of the request is one
 * sequence: there, keeping each of thousands of persons (up to 640 KB of properties each) until
 * the request ends would hold far more memory than reading them again costs.
 */
const MAX_KEPT = 100

export class SequencePersons {
  /** distinct id → person id, and person id → the person as last read or written. */
  private readonly ids = new Map<string, string>()
  private readonly persons = new Map<string, PersonDocument>()

  static of(ctx: EventContext): SequencePersons {
    let found = ctx.sequence.get(KEY) as SequencePersons | undefined
    if (!found) ctx.sequence.set(KEY, (found = new SequencePersons()))
    return found
  }

  /** The person the sequence of `ctx` keeps for `distinctId`, without starting to keep any. */
  static known(ctx: EventContext, distinctId: string): PersonDocument | undefined {
    return (ctx.sequence.get(KEY) as SequencePersons | undefined)?.get(distinctId)
  }

  get(distinctId: string): PersonDocument | undefined {
    const id = this.ids.get(distinctId)
    return id === undefined ? undefined : this.persons.get(id)
  }

  /** The person of `distinctId` as just read or written (one of its other ids sees it too). */
  remember(distinctId: string, person: PersonDocument): void {
    if (this.persons.size >= MAX_KEPT && !this.persons.has(person.id)) this.forget()
    this.ids.set(distinctId, person.id)
    this.persons.set(person.id, person)
  }

  /** How many persons the sequence keeps. */
  get kept(): number {
    return this.persons.size
  }

  forget(): void {
    this.ids.clear()
    this.persons.clear()
  }
}
