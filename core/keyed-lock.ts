/**
 * Runs tasks that share a key one after another, in the order they were submitted, while tasks of
 * different keys run concurrently. Keeps events of one distinct_id in arrival order across
 * concurrent requests, which the person steps rely on (capture.md §1.14).
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const result = previous.then(task, task)
    const tail = result.catch(() => undefined)
    this.tails.set(key, tail)
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    })
    return result
  }

  get pending(): number {
    return this.tails.size
  }
}
