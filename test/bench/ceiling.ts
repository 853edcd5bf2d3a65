/**
 * Figure 4's ceiling, served by the baselines process: the service's own flags work (body parsing,
 * prepared evaluation of the same definitions, the requests of a turn evaluated together as the
 * service does, response JSON, the same compiled code) in a bare node:http handler, with
 * the person and group properties taken from the request instead of read from the database. No
 * Koa, no project lookup, no database round trip: what the flags endpoint could reach on this
 * machine if everything but the evaluation and the HTTP exchange cost nothing. It answers the same
 * values as the service for the bench's users (run.ts checks one body of each).
 */
import { randomUUID } from 'node:crypto'
import type { PreparedFlags, Properties } from '../../plugins/decide/evaluator/index.ts'
import type { SdkDefinitions } from './flags.ts'

/**
 * The decide module `file` as the service runs it: compiled by tsc into dist/ (which starting the
 * service builds first), not tsx's transform of the source, whose name-keeping wrappers around
 * every closure make the same answers dearer than the service's.
 */
const compiled = (file: string) => import(new URL(`../../dist/plugins/decide/${file}.js`, import.meta.url).href)

const { evaluateFlags, prepareFlags }: typeof import('../../plugins/decide/evaluator/index.ts') =
  await compiled('evaluator/index')
const { parseFlagsJson, readFlagsBody }: typeof import('../../plugins/decide/http/flags-request.ts') =
  await compiled('http/flags-request')
const { flagsResponseBuffer }: typeof import('../../plugins/decide/http/response-json.ts') =
  await compiled('http/response-json')
const { shapeFor }: typeof import('../../plugins/decide/http/responses.ts') = await compiled('http/responses')
const { EvaluationTurns }: typeof import('../../plugins/decide/evaluation-turns.ts') =
  await compiled('evaluation-turns')

const V2 = shapeFor('/flags/', '2')

export class FlagsCeiling {
  private readonly prepared: PreparedFlags
  private readonly groupIndexByName: Map<string, number>
  private readonly turns = new EvaluationTurns({ sliceMs: 10, clock: () => performance.now() })

  constructor(private readonly definitions: SdkDefinitions) {
    this.prepared = prepareFlags(definitions.flags)
    this.groupIndexByName = new Map(
      Object.entries(definitions.group_type_mapping).map(([index, name]) => [name, Number(index)]),
    )
  }

  /**
   * The `/flags/?v=2` answer to a JSON body, as the service would give it with these stored
   * properties; `interpret`: with the reference interpreter instead of the compiled flags.
   */
  async answer(text: string, interpret = false): Promise<Buffer> {
    const fields = readFlagsBody(parseFlagsJson(text))
    const groupProperties: Record<number, Properties> = {}
    for (const [name, properties] of Object.entries(fields.group_properties ?? {})) {
      const index = this.groupIndexByName.get(name)
      if (index !== undefined) groupProperties[index] = { ...properties }
    }
    const result = await this.turns.run(async () =>
      evaluateFlags({
        flags: this.definitions.flags,
        prepared: this.prepared,
        cohorts: this.definitions.cohorts,
        groupTypeMapping: { ...this.definitions.group_type_mapping },
        distinctId: fields.distinct_id,
        personPropertyOverrides: fields.person_properties ?? null,
        groups: fields.groups ?? null,
        groupPropertyOverrides: fields.group_properties ?? null,
        database: { status: 'loaded', person: { properties: { ...fields.person_properties } }, groupProperties },
        now: new Date(),
        interpret,
      }),
    )
    return flagsResponseBuffer({}, V2, result, { requestId: randomUUID(), evaluatedAt: Date.now() })
  }
}
