/**
 * Answers of check lists, kept while the database is unchanged. A cached page is exact, even
 * with other processes writing the same database file: every read first asks for the
 * database's version (SQLite's `PRAGMA data_version`, which moves when another connection
 * commits, plus a count of this connection's own commits), and a different version drops
 * every page. Bounded in bytes: pages above `maxEntryBytes` are never kept, and the oldest
 * pages go when the total would pass `maxBytes`.
 */
export class PageCache<V extends { bytes: number }> {
  private readonly entries = new Map<string, V>()
  private version: string | undefined
  private size = 0

  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes: number,
  ) {}

  /** The page for key, if it was stored at this version of the database. */
  get(version: string, key: string): V | undefined {
    if (version !== this.version) {
      this.clear()
      this.version = version
      return undefined
    }
    const entry = this.entries.get(key)
    if (entry) {
      // most recently used last: eviction takes the front
      this.entries.delete(key)
      this.entries.set(key, entry)
    }
    return entry
  }

  set(version: string, key: string, value: V): void {
    if (version !== this.version || value.bytes > this.maxEntryBytes) return
    const old = this.entries.get(key)
    if (old) {
      this.size -= old.bytes
      this.entries.delete(key)
    }
    this.entries.set(key, value)
    this.size += value.bytes
    for (const [k, v] of this.entries) {
      if (this.size <= this.maxBytes) break
      this.entries.delete(k)
      this.size -= v.bytes
    }
  }

  clear(): void {
    this.entries.clear()
    this.size = 0
  }

  /** bytes held now (for tests and diagnostics) */
  get bytes(): number {
    return this.size
  }
}
