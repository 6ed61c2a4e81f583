/**
 * Claims on the alert delivery outbox by several processes on one database: claims made at the
 * same moment through two stores (the server's and a second one, as a second server would
 * hold) never hand out one delivery twice, a held delivery is not claimed again until its
 * lease ends, and only its owner can record an attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../../src/server/index.js'
import type { ClaimedAlertDelivery, NewAlertDelivery, Store } from '../../../src/server/store/index.js'
import { startResultsBench, type ResultsBench } from '../results/results-helpers.js'

let bench: ResultsBench
let other: Store

beforeAll(async () => {
  bench = await startResultsBench()
  other = await openStore(bench.dbPath)
})
afterAll(async () => {
  await other?.close()
  await bench?.close()
})

describe('alert delivery claims shared by two processes', () => {
  it('hands each due delivery to one owner, keeps it held for the lease, and takes an attempt from its owner only', async () => {
    const checkId = await bench.createCheck('claims.test', { activated: false })
    const due = Date.now() - 1000
    const deliveries: NewAlertDelivery[] = Array.from({ length: 30 }, (_, n) => ({
      notificationId: `notification-${n}`,
      checkId,
      alertType: 'ALERT_FAILURE',
      channelType: 'WEBHOOK',
      channel: { name: 'w', url: 'http://127.0.0.1:9/hook' },
      event: { n },
      status: 'PENDING',
      reason: null,
      dueAt: due,
    }))
    await bench.store.alertDeliveries.enqueue('acc-a', deliveries)

    const now = Date.now()
    const claim = (store: Store, owner: string, max = 4) => store.alertDeliveries.claim({ owner, max, leaseMs: 60_000, now })
    const rounds = await Promise.all(Array.from({ length: 12 }, (_, n) => claim(n % 2 === 0 ? bench.store : other, `owner-${n}`)))
    // what the concurrent claims passed over (held by another at that moment) is still there for a later one
    const rest = await claim(other, 'owner-last', 30)
    const claimed: Array<ClaimedAlertDelivery & { owner: string }> = [
      ...rounds.flatMap((r, n) => r.map((d) => ({ ...d, owner: `owner-${n}` }))),
      ...rest.map((d) => ({ ...d, owner: 'owner-last' })),
    ]
    const ids = claimed.map((d) => d.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toHaveLength(30)
    expect(claimed.map((d) => (d.event as { n: number }).n).sort((a, b) => a - b)).toEqual(deliveries.map((_, n) => n))

    // all held: another claim at the same moment finds nothing, one after the lease finds them again
    expect(await claim(bench.store, 'owner-late')).toEqual([])
    const expired = await other.alertDeliveries.claim({ owner: 'owner-after', max: 1, leaseMs: 60_000, now: now + 60_001 })
    expect(expired).toHaveLength(1)

    // the lease taken over: the first owner's attempt is refused, the new owner's is recorded
    const [taken] = expired
    const first = claimed.find((d) => d.id === taken.id)!
    const attempt = { attempt: 1, startedAt: new Date(now).toISOString(), durationMs: 12.5, statusCode: 200, error: null, outcome: 'DELIVERED' as const }
    expect(await bench.store.alertDeliveries.recordAttempt(first.owner, taken.id, attempt, { status: 'DELIVERED', nextAttemptAt: null })).toBe(false)
    expect(await other.alertDeliveries.recordAttempt('owner-after', taken.id, attempt, { status: 'DELIVERED', nextAttemptAt: null })).toBe(true)

    const answer = await bench.call('GET', `/v1/alert-deliveries/${taken.id}`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toMatchObject({ id: taken.id, checkId, status: 'DELIVERED', nextAttemptAt: null })
    expect(answer.json.attempts).toEqual([{ attempt: 1, startedAt: attempt.startedAt, durationMs: 12.5, statusCode: 200, error: null, outcome: 'DELIVERED' }])
  })
})
