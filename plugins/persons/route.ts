/**
 * `GET /api/projects/:id/persons?distinct_id=`: the person with all its distinct ids. Mounted
 * under /api, so the core's admin key check covers it.
 */
import type Router from '@koa/router'
import type { Db } from 'mongodb'
import { httpError } from '../../core/plugin-api.ts'
import { getDistinctIdsOfPerson, getPersonByDistinctId } from './person-store.ts'

export function mountPersonRoute(router: Router, db: Db): void {
  router.get('/api/projects/:id/persons', async (ctx) => {
    const projectId = Number(ctx.params.id)
    if (!Number.isSafeInteger(projectId) || projectId <= 0)
      throw httpError('not_found', `no project with id ${ctx.params.id}`, 'id')
    const distinctId = ctx.query.distinct_id
    if (typeof distinctId !== 'string' || distinctId === '')
      throw httpError('required', 'give the person to look up as ?distinct_id=', 'distinct_id')
    const person = await getPersonByDistinctId(db, projectId, distinctId)
    if (!person) throw httpError('not_found', `no person has the distinct_id "${distinctId}"`, 'distinct_id')
    ctx.body = {
      id: person.id,
      distinct_ids: await getDistinctIdsOfPerson(db, projectId, person.id),
      properties: person.properties,
      is_identified: person.is_identified,
      created_at: person.created_at,
    }
  })
}
