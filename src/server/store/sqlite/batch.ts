import type { Db } from './migrations.js'
import type { Exec } from './index.js'
import { unavailableOr } from './errors.js'

/**
 * Group commit: writes that arrive together (the requests one turn of the event loop has read,
 * e.g. the creates of an apply with --concurrency 16) run in one transaction, each in a
 * savepoint of its own, so that one failing write leaves the others alone. A commit costs
 * far more than a row (its WAL frames are written for every page it touched), so N writes
 * committed together cost little more than one. Each caller's promise settles once the
 * transaction holding its write has committed, never before: an answer still means "stored".
 */
export function groupCommit(db: Db, exec: Exec): <T>(write: () => T) => Promise<T> {
  let queue: Array<{ write: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }> = []
  const flush = () => {
    const batch = queue
    queue = []
    exec(() => {
      if (batch.length === 1) {
        // alone: its own transaction, as without grouping
        const [one] = batch
        try {
          one.resolve(db.transaction(one.write).immediate())
        } catch (error) {
          one.reject(unavailableOr(error))
        }
        return
      }
      const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
      db.transaction(() => {
        for (const item of batch) {
          try {
            // nested: a savepoint, rolled back alone when this write throws
            outcomes.push({ ok: true, value: db.transaction(item.write)() })
          } catch (error) {
            outcomes.push({ ok: false, error: unavailableOr(error) })
          }
        }
      }).immediate()
      batch.forEach((item, i) => {
        const outcome = outcomes[i]
        if (outcome.ok) item.resolve(outcome.value)
        else item.reject(outcome.error)
      })
    }).catch((error: unknown) => {
      // the transaction itself failed (busy, disk): nothing of it was stored
      for (const item of batch) item.reject(error)
    })
  }
  return <T>(write: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ write, resolve: resolve as (value: unknown) => void, reject })
    })
}
