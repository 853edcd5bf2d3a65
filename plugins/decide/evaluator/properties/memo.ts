/**
 * Parsed filter values by their text (compiled patterns, versions, version requirements): the
 * same few values come back on every request, and parsing one costs more than using it. The
 * oldest entry goes when `limit` are held; the values are never modified once remembered.
 */
export class TextMemo<T> {
  private readonly entries = new Map<string, T>()

  constructor(private readonly limit: number) {}

  get(text: string): T | undefined {
    return this.entries.get(text)
  }

  remember(text: string, value: T): void {
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(text, value)
  }
}
