/**
 * The person id each distinct id was last found with, so that the next lookup reads only that
 * person (always fresh) instead of the mapping and then the person. Capture (PersonStore) and flags
 * (the persons service, persons-reader.ts) both look persons up through it.
 *
 * This is exact because a distinct id only ever leaves a person that is merged away: a merge
 * marks that person first (after which it takes no writes), folds it into the survivor, moves its
 * ids and deletes it (merge-steps.ts), and nothing else re-points an id. So a remembered person
 * that exists unmarked is the one a read through the mapping would find, and one that is gone or
 * merged away (a committed mark: `findById` answers nothing) sends the lookup back to the
 * mapping. A distinct id without a person is not remembered (a person may be created for it at
 * any moment).
 */
import { ProjectKeyed } from './project-keyed.ts'

/** Ids and uuids of ~40 bytes each: a few MB at most. */
const REMEMBERED = 50_000

/** The two reads a lookup is made of; `now` is what a lookup that has to create a person uses. */
export interface PersonLookup<P extends { id: string }> {
  findById(projectId: number, id: string): Promise<P | null | undefined>
  findThroughMapping(projectId: number, distinctId: string, now?: Date): Promise<P | null>
}

export class RememberedPersonIds {
  private readonly ids = new ProjectKeyed<string>(REMEMBERED)

  async find<P extends { id: string }>(
    lookup: PersonLookup<P>,
    projectId: number,
    distinctId: string,
    now?: Date,
  ): Promise<P | null> {
    const remembered = this.ids.get(projectId, distinctId)
    if (remembered !== undefined) {
      const person = await lookup.findById(projectId, remembered)
      if (person) return person
      this.ids.delete(projectId, distinctId)
    }
    const person = await lookup.findThroughMapping(projectId, distinctId, now)
    if (person) this.ids.set(projectId, distinctId, person.id)
    return person
  }

  /** A person was just created with this id. */
  remember(projectId: number, distinctId: string, personId: string): void {
    this.ids.set(projectId, distinctId, personId)
  }
}
