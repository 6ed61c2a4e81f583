// The soak's exactly-once verification, read from the database: every due time of every check
// in a window of due times (enumerated from the checks' schedules, src/server/scheduler/due.ts)
// must have its run row, settled: done with exactly one FINAL result, or skipped for a counted
// reason. Windows are settled as the soak goes (rows are kept 10 minutes), then the last ones
// at the end.

/**
 * The FINAL results of the done runs due in [from, to): full rows name their run
 * ("<run row id>.<claim>"); a compact one (result_runs) is its check's and location's run done
 * when it was created (a run's done_at is its results' creation time), in the hour's partition
 * of result_runs or, once its hour is packed, in a block of result_blocks.
 */
const SETTLE = `
  WITH runs AS (
    SELECT id, check_id, location, due_at::float8 AS due_at, state, skip_reason, done_at FROM check_runs
    WHERE session_id IS NULL AND due_at >= $1 AND due_at < $2),
  full_finals AS (
    SELECT split_part(run_id, '.', 1) AS run, count(*)::int AS n FROM check_results
    WHERE result_type = 'FINAL' AND session_id IS NULL AND stopped_at >= $3 AND split_part(run_id, '.', 1) IN (SELECT id FROM runs)
    GROUP BY 1),
  compact AS (
    SELECT chk, loc, created FROM result_runs WHERE created >= $1::bigint - 600000
    UNION ALL
    SELECT b.chk, b.loc, b.hour + b.v[2][i] FROM result_blocks b CROSS JOIN LATERAL generate_series(1, array_length(b.v, 2)) AS i
    WHERE b.hour >= $1::bigint - 3600000 AND b.hour < $2::bigint + 3600000),
  compact_finals AS (
    SELECT r.id AS run, count(*)::int AS n FROM runs r
      JOIN checks k ON k.id = r.check_id JOIN result_locations l ON l.name = r.location
      JOIN compact c ON c.chk = k.seq AND c.loc = l.id AND c.created = r.done_at
    WHERE r.state = 'done' GROUP BY 1)
  SELECT r.id, r.check_id, r.location, r.due_at, r.state, r.skip_reason, coalesce(f.n, 0) + coalesce(c.n, 0) AS finals
  FROM runs r LEFT JOIN full_finals f ON f.run = r.id LEFT JOIN compact_finals c ON c.run = r.id`

export function newTally() {
  return { expected: 0, ran: 0, skipped: { late: 0, missed: 0, maintenance: 0, other: 0 }, vanished: 0, lost: 0, doubled: 0, stuck: 0, examples: [] }
}

/** Settles the due times in [from, to) of `checks` into `tally`. */
export async function settle(db, due, checks, from, to, tally) {
  const rows = (await db.query(SETTLE, [from, to, new Date(from - 120_000).toISOString()])).rows
  const byKey = new Map(rows.map((r) => [`${r.check_id}|${r.location}|${r.due_at}`, r]))
  const note = (what) => {
    if (tally.examples.length < 10) tally.examples.push(what)
  }
  for (const check of checks) {
    for (let k = due.dueIndexAt(check, from - 1) + 1; due.dueTime(check, k) < to; k++) {
      const at = due.dueTime(check, k)
      if (at < from) continue
      for (const location of due.locationsFor(check, k)) {
        tally.expected++
        const run = byKey.get(`${check.id}|${location}|${at}`)
        const name = `${check.name} ${location} ${new Date(at).toISOString()}`
        if (!run) {
          tally.vanished++
          note(`no run: ${name}`)
        } else if (run.state === 'done') {
          if (run.finals === 1) tally.ran++
          else if (run.finals === 0) {
            tally.lost++
            note(`done without a result: ${name}`)
          } else {
            tally.doubled++
            note(`${run.finals} results: ${name}`)
          }
        } else if (run.state === 'skipped') {
          if (run.skip_reason in tally.skipped && run.skip_reason !== 'other') tally.skipped[run.skip_reason]++
          else {
            tally.skipped.other++
            note(`skipped (${run.skip_reason}): ${name}`)
          }
        } else {
          tally.stuck++
          note(`still due: ${name}`)
        }
      }
    }
  }
}

/** The skipped runs in the database now (each kept 10 minutes: read every minute, none is missed), by id. */
export async function collectSkipped(db, seen) {
  const rows = (await db.query(`SELECT id, skip_reason FROM check_runs WHERE state = 'skipped' AND skip_reason IN ('late', 'missed', 'maintenance')`)).rows
  for (const row of rows) seen.set(row.id, row.skip_reason)
}

/** What the end checks: the counts kept of skipped runs, alerts, leases, deadlocks. */
export async function finalChecks(db, { flakyIds, deliveries, now, pgLog }) {
  const counted = Object.fromEntries((await db.query(`SELECT reason, sum(skipped)::int AS n FROM run_skips GROUP BY 1`)).rows.map((r) => [r.reason, r.n]))
  const notifications = (await db.query(`SELECT check_id, kind, count(*)::int AS n FROM alert_notifications GROUP BY 1, 2`)).rows
  const flaky = new Set(flakyIds)
  const perFlaky = new Map(flakyIds.map((id) => [id, { ALERT_FAILURE: 0, ALERT_RECOVERY: 0 }]))
  let others = 0
  for (const row of notifications) {
    if (!flaky.has(row.check_id)) others += row.n
    else perFlaky.get(row.check_id)[row.kind] = (perFlaky.get(row.check_id)[row.kind] ?? 0) + row.n
  }
  const alerted = [...perFlaky.values()].filter((c) => c.ALERT_FAILURE > 0).length
  const twice = [...perFlaky.values()].filter((c) => c.ALERT_FAILURE > 1 || c.ALERT_RECOVERY > 1).length
  const unrecovered = [...perFlaky.values()].filter((c) => c.ALERT_FAILURE !== c.ALERT_RECOVERY).length
  const [{ n: notified }] = (await db.query(`SELECT count(*)::int AS n FROM alert_notifications`)).rows
  const flakyNotified = [...perFlaky.values()].reduce((n, c) => n + c.ALERT_FAILURE + c.ALERT_RECOVERY, 0)
  // a notification is made once per run that moved the alert state: never two of one kind for one run
  const [{ n: doubledNotifications }] = (
    await db.query(`SELECT count(*)::int AS n FROM (SELECT check_id, kind, check_run_id FROM alert_notifications
    GROUP BY 1, 2, 3 HAVING count(*) > 1) d`)
  ).rows
  const statuses = Object.fromEntries((await db.query(`SELECT status, count(*)::int AS n FROM alert_deliveries GROUP BY 1`)).rows.map((r) => [r.status, r.n]))
  const received = deliveries.length
  const receivedTwice = deliveries.filter((d) => d.times > 1).length
  const [{ n: runLeases }] = (await db.query(`SELECT count(*)::int AS n FROM check_runs WHERE state = 'due' AND lease_expires_at > $1`, [now])).rows
  const [{ n: deliveryLeases }] = (await db.query(`SELECT count(*)::int AS n FROM alert_deliveries WHERE status = 'PENDING' AND lease_expires_at > $1`, [now]))
    .rows
  const deadlocks = (pgLog.match(/deadlock detected/g) ?? []).length
  const lockWaits = (pgLog.match(/still waiting for \w+Lock/g) ?? []).length
  return {
    counted,
    alerted,
    twice,
    unrecovered,
    others,
    notified,
    flakyNotified,
    doubledNotifications,
    statuses,
    received,
    receivedTwice,
    runLeases,
    deliveryLeases,
    deadlocks,
    lockWaits,
  }
}
