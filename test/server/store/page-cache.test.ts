import { describe, expect, it } from 'vitest'
import { PageCache } from '../../../src/server/store/sqlite/page-cache.js'

describe('the check list cache of the SQLite store', () => {
  it('stays within its byte budget, keeps no page above the entry limit, and drops everything on a new version', () => {
    const cache = new PageCache<{ bytes: number; n: number }>(1000, 300)
    // a read comes first and learns the database's version, as the store's list does
    expect(cache.get('v1', 'k0')).toBeUndefined()
    for (let n = 0; n < 100; n++) cache.set('v1', `k${n}`, { bytes: 100, n })
    expect(cache.bytes).toBeLessThanOrEqual(1000)
    // the most recent pages are the ones kept
    expect(cache.get('v1', 'k99')).toEqual({ bytes: 100, n: 99 })
    expect(cache.get('v1', 'k0')).toBeUndefined()
    cache.set('v1', 'big', { bytes: 301, n: -1 })
    expect(cache.get('v1', 'big')).toBeUndefined()
    // another version of the database: nothing cached before is answered
    expect(cache.get('v2', 'k99')).toBeUndefined()
    expect(cache.bytes).toBe(0)
    // a page computed at an older version is not kept
    cache.set('v1', 'late', { bytes: 10, n: 0 })
    expect(cache.get('v2', 'late')).toBeUndefined()
  })
})
