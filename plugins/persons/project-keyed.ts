/**
 * A bounded memo of values per (project, distinct_id): one map per project keyed by the id as
 * parsed, so a lookup builds and hashes no "project:id" string per event. When `limit` entries are
 * held, it is emptied and starts again (the values are cheap to compute or to confirm again).
 */
export class ProjectKeyed<V> {
  private readonly projects = new Map<number, Map<string, V>>()
  private count = 0

  constructor(private readonly limit: number) {}

  get(projectId: number, key: string): V | undefined {
    return this.projects.get(projectId)?.get(key)
  }

  delete(projectId: number, key: string): void {
    if (this.projects.get(projectId)?.delete(key)) this.count--
  }

  set(projectId: number, key: string, value: V): void {
    if (this.count >= this.limit) {
      this.projects.clear()
      this.count = 0
    }
    let keys = this.projects.get(projectId)
    if (!keys) this.projects.set(projectId, (keys = new Map()))
    if (!keys.has(key)) this.count++
    keys.set(key, value)
  }
}
