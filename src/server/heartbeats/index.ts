/**
 * Heartbeat checks: pings received at `/ping/<token>`, the events they make, the FAILING
 * event of a period and grace that ended without a ping, and availability. Failures and
 * recoveries become FINAL results through `recordResult`, so check statuses, error groups,
 * badges, alerts and incidents follow heartbeat checks as they follow every other check.
 *
 * A period starts when the check is created and again at every ping. With `since` the start
 * of the current period, a ping at `t` is:
 * - RECEIVED when t <= since + period;
 * - GRACE when since + period < t <= since + period + grace;
 * - LATE when later: periods were missed, so their FAILING are recorded first (those the
 *   scheduler has not recorded yet), then the LATE ping, which recovers the check.
 * Every period that passes without a ping is one failed run: the k-th period of a silence (k
 * from 0) starts at since + k × period and is missed once since + (k + 1) × period + grace has
 * passed. The scheduler's tick records FAILING for each missed period, oldest first, however far
 * the clock moved since the last tick, and each once: the store records the last period marked
 * (a compare-and-set), so any number of processes on one database may sweep.
 * EARLY is in the reference's vocabulary but is never recorded: a ping is never too early.
 */
import { randomUUID } from 'node:crypto'
import { heartbeatMs, type HeartbeatSettings } from '../../schema/index.js'
import type { RunResult } from '../../runner/types.js'
import { recordResult, type RecordableCheck } from '../results/index.js'
import { withGroup } from '../groups.js'
import type { CheckRecord, HeartbeatEventRecord, HeartbeatRecord, Repositories, StoredResultInput, Store } from '../store/index.js'

export type PingState = 'RECEIVED' | 'GRACE' | 'LATE'

/** Period and grace of a heartbeat check's body, in ms. */
export function periodsOf(heartbeat: HeartbeatSettings): { periodMs: number; graceMs: number } {
  return { periodMs: heartbeatMs(heartbeat.period, heartbeat.periodUnit), graceMs: heartbeatMs(heartbeat.grace, heartbeat.graceUnit) }
}

export const newPingToken = (): string => randomUUID()

/** The ping URL of a token on a server reached at `baseUrl`. */
export const pingUrlOf = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, '')}/ping/${token}`

export function pingState(hb: Pick<HeartbeatRecord, 'since' | 'periodMs' | 'graceMs'>, at: number): PingState {
  if (at <= hb.since + hb.periodMs) return 'RECEIVED'
  if (at <= hb.since + hb.periodMs + hb.graceMs) return 'GRACE'
  return 'LATE'
}

function result(check: { id: string; name?: string }, at: number, failed: boolean, error: string | null): RunResult {
  const time = new Date(at).toISOString()
  return {
    checkId: check.id,
    name: String(check.name ?? ''),
    checkType: 'HEARTBEAT' as RunResult['checkType'],
    runLocation: 'heartbeat',
    resultType: 'FINAL',
    attempt: 1,
    startedAt: time,
    stoppedAt: time,
    responseTime: null,
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    timedOut: false,
    aborted: false,
    status: (failed ? 'FAILED' : 'PASSED') as RunResult['status'],
    failureKind: (failed ? 'ASSERTION' : null) as RunResult['failureKind'],
    error,
    assertions: [],
    details: {} as RunResult['details'],
  }
}

/** The check as its results are recorded: in a group, with the group's activated, muted, alert settings and channels (withGroup). */
async function checkOf(tx: Repositories, account: string, checkId: string) {
  const record = await tx.checks.get(account, checkId)
  if (!record) return undefined
  const body = await withGroup(tx, account, JSON.parse(record.json) as Record<string, unknown> & { id: string; name?: string; activated?: boolean })
  return { record, body }
}

/**
 * A heartbeat check's FINAL result: stored as the check's result (GET /v1/check-results/{checkId}
 * lists its pings and missed periods) and recorded (status, error groups, analytics, alerts),
 * both under one id, so a second recording of it changes nothing.
 */
async function record(
  tx: Repositories,
  account: string,
  check: { record: CheckRecord; body: Record<string, unknown> & { id: string } },
  id: string,
  run: RunResult & { heartbeatState: string },
  event: Record<string, unknown>,
  now: number,
): Promise<void> {
  const { assertions: _assertions, ...rest } = run
  await tx.results.add(account, check.record.id, id, {
    ...rest,
    details: { kind: 'HEARTBEAT', state: run.heartbeatState, ...event },
  } as unknown as StoredResultInput)
  // recorded as the check is in its group (alert settings, channels, muted)
  await recordResult(tx, check.body as unknown as RecordableCheck, { ...run, id }, { now })
}

/** The start of the first period of a silence not recorded as FAILING (see HeartbeatRecord.failedSince). */
export function nextMissed(hb: Pick<HeartbeatRecord, 'since' | 'periodMs' | 'failedSince'>): number {
  return hb.failedSince !== null && hb.failedSince >= hb.since ? hb.failedSince + hb.periodMs : hb.since
}

/** Records FAILING for the period starting at `start` when it is the next one to record; false when it is not (recorded by any process, or a ping came). */
async function fail(tx: Repositories, hb: HeartbeatRecord, start: number, now: number): Promise<boolean> {
  if (!(await tx.heartbeats.markFailing(hb.checkId, start))) return false
  const at = start + hb.periodMs + hb.graceMs
  await tx.heartbeats.addEvent(hb.account, { checkId: hb.checkId, state: 'FAILING', at, source: null, userAgent: null })
  const check = await checkOf(tx, hb.account, hb.checkId)
  if (check && check.body.activated !== false) {
    await record(
      tx,
      hb.account,
      check,
      `heartbeat:${hb.checkId}:${start}`,
      { ...result(check.body, at, true, 'No ping received within the period and grace'), heartbeatState: 'FAILING' },
      { periodStartedAt: new Date(start).toISOString() },
      now,
    )
  }
  return true
}

/**
 * In `tx`, as the store has it now: FAILING for the check's next unrecorded period of the silence
 * that started at `since`, when it ended (grace included) before `now`. 'none' when no such
 * period is left (or a ping ended that silence); 'taken' when another process recorded it first.
 */
async function failNext(
  tx: Repositories,
  silence: Pick<HeartbeatRecord, 'account' | 'checkId' | 'since'>,
  now: number,
): Promise<'recorded' | 'taken' | 'none'> {
  const hb = await tx.heartbeats.get(silence.account, silence.checkId)
  if (!hb || hb.since !== silence.since) return 'none'
  const start = nextMissed(hb)
  if (start + hb.periodMs + hb.graceMs >= now) return 'none'
  return (await fail(tx, hb, start, now)) ? 'recorded' : 'taken'
}

/** Missed periods of one check one sweep records at most (the next ticks go on): a server back after a long stop does not spend one tick on one check. */
const MISSED_PER_SWEEP = 100

/**
 * FAILING for the periods of `hb`'s silence that ended before `now`, oldest first, each in a
 * transaction of its own, up to `limit`; stops where another process is recording them (it, or
 * the next sweep, goes on). Returns how many this call recorded.
 */
async function failMissed(store: Store, hb: HeartbeatRecord, now: number, limit: number): Promise<number> {
  let recorded = 0
  while (recorded < limit && (await store.transaction((tx) => failNext(tx, hb, now))) === 'recorded') recorded++
  return recorded
}

/**
 * A ping of `token` at `now`: its event, the next period, and a passing result. Undefined
 * when no heartbeat check has that token.
 */
export async function receivePing(
  store: Store,
  token: string,
  now: number,
  from: { source: string | null; userAgent: string | null },
): Promise<HeartbeatEventRecord | undefined> {
  // a long silence's periods first, each in a transaction of its own (the scheduler has usually recorded them)
  const before = await store.heartbeats.byToken(token)
  if (!before) return undefined
  if (pingState(before, now) === 'LATE') await failMissed(store, before, now, Infinity)
  return store.transaction(async (tx) => {
    const hb = await tx.heartbeats.byToken(token)
    if (!hb) return undefined
    const state = pingState(hb, now)
    // whatever is left of the silence, in this transaction: 'taken' by another process, the next is read again
    if (state === 'LATE') while ((await failNext(tx, hb, now)) !== 'none');
    const event = await tx.heartbeats.addEvent(hb.account, { checkId: hb.checkId, state, at: now, ...from })
    await tx.heartbeats.ping(hb.checkId, now)
    const check = await checkOf(tx, hb.account, hb.checkId)
    if (check && check.body.activated !== false) {
      await record(
        tx,
        hb.account,
        check,
        `heartbeat-ping:${event.id}`,
        { ...result(check.body, now, false, null), heartbeatState: state },
        { eventId: event.id, source: from.source, userAgent: from.userAgent },
        now,
      )
    }
    return event
  })
}

/** Records FAILING for every period (grace included) that ended before `now` without a ping, each once (up to MISSED_PER_SWEEP a check). Returns how many. */
export async function sweepHeartbeats(store: Store, now: number): Promise<number> {
  let failed = 0
  for (const hb of await store.heartbeats.overdue(now)) failed += await failMissed(store, hb, now, MISSED_PER_SWEEP)
  return failed
}

/** Availability of [from, to): see README "Heartbeat checks". */
export function availability(events: HeartbeatEventRecord[]): { successRatio: number; total: number } {
  const passed = events.filter((e) => e.state === 'RECEIVED' || e.state === 'GRACE').length
  const failed = events.filter((e) => e.state === 'FAILING').length
  const total = passed + failed
  return { successRatio: total === 0 ? 100 : Math.round((passed / total) * 10000) / 100, total }
}
