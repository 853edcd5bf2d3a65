/**
 * Lazy steps of a query's results as plain iterator objects rather than generators. On Node 20
 * (V8 11.3) whatever a generator holds survives the next minor GCs whether or not it is still
 * reachable, so a generator per query kept each query's command, plan and documents alive until
 * a full GC: a tenth of a point lookup's allocations survived every scavenge, made each one take
 * milliseconds and was copied into the old generation. Iterator objects are collected young.
 *
 * Each is its own iterable (for...of works on it) and passes `return()` on to its source, as a
 * generator's for...of does, so that a range walk stopped early closes its lmdb cursor.
 */

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined }

/** The iterator of an iterable, with its `return` if it has one. */
function iteratorOf<T>(source: Iterable<T>): Iterator<T> {
  return source[Symbol.iterator]()
}

/** An iterator that is its own iterable. */
export abstract class Step<T> implements IterableIterator<T> {
  abstract next(): IteratorResult<T>

  [Symbol.iterator](): this {
    return this
  }
}

class Mapped<T, R> extends Step<R> {
  private readonly source: Iterator<T>

  constructor(
    source: Iterable<T>,
    private readonly f: (item: T) => R,
  ) {
    super()
    this.source = iteratorOf(source)
  }

  next(): IteratorResult<R> {
    const item = this.source.next()
    return item.done ? DONE : { done: false, value: this.f(item.value) }
  }

  return(): IteratorResult<R> {
    this.source.return?.()
    return DONE
  }
}

/** `f` of each item of `source`, lazily. */
export function mapped<T, R>(source: Iterable<T>, f: (item: T) => R): IterableIterator<R> {
  return new Mapped(source, f)
}

class Filtered<T, R> extends Step<R> {
  private readonly source: Iterator<T>

  constructor(
    source: Iterable<T>,
    private readonly f: (item: T) => R | undefined,
  ) {
    super()
    this.source = iteratorOf(source)
  }

  next(): IteratorResult<R> {
    for (let item = this.source.next(); !item.done; item = this.source.next()) {
      const value = this.f(item.value)
      if (value !== undefined) return { done: false, value }
    }
    return DONE
  }

  return(): IteratorResult<R> {
    this.source.return?.()
    return DONE
  }
}

/** `f` of each item of `source` that `f` does not turn into undefined, lazily. */
export function filterMapped<T, R>(source: Iterable<T>, f: (item: T) => R | undefined): IterableIterator<R> {
  return new Filtered(source, f)
}

class SkipLimit<T> extends Step<T> {
  private readonly source: Iterator<T>
  private skipped = 0
  private taken = 0

  constructor(
    source: Iterable<T>,
    private readonly skip: number,
    private readonly limit: number,
  ) {
    super()
    this.source = iteratorOf(source)
  }

  next(): IteratorResult<T> {
    if (this.limit > 0 && this.taken >= this.limit) return this.return()
    for (let item = this.source.next(); !item.done; item = this.source.next()) {
      if (this.skipped < this.skip) {
        this.skipped += 1
        continue
      }
      this.taken += 1
      return item
    }
    return DONE
  }

  return(): IteratorResult<T> {
    this.source.return?.()
    return DONE
  }
}

/** `source` without its first `skip` items and after `limit` more (0: no limit). */
export function skipLimit<T>(source: Iterable<T>, skip: number, limit: number): IterableIterator<T> {
  return new SkipLimit(source, skip, limit)
}

class Distinct<T> extends Step<T> {
  private readonly source: Iterator<T>
  private readonly seen = new Set<T>()

  constructor(source: Iterable<T>) {
    super()
    this.source = iteratorOf(source)
  }

  next(): IteratorResult<T> {
    for (let item = this.source.next(); !item.done; item = this.source.next()) {
      if (this.seen.has(item.value)) continue
      this.seen.add(item.value)
      return item
    }
    return DONE
  }

  return(): IteratorResult<T> {
    this.source.return?.()
    return DONE
  }
}

/** `source` without repeats, in order. */
export function distinct<T>(source: Iterable<T>): IterableIterator<T> {
  return new Distinct(source)
}
