import { randomUUID } from 'node:crypto'
import type { CheckData, CheckPage, CheckRecord, CheckStatusFilter, CheckStore, CheckType } from '../index.js'
import type { Sql } from './index.js'
import { foldedName } from '../check-rows.js'
import type { Clock } from '../../../runner/clock.js'

/**
 * The filters of the list (CheckListQuery): $1 the account, $4 to $7 the filters' values, each
 * null when not asked (every parameter is named, so that PostgreSQL knows its type); the status
 * (a join with check_statuses) only when asked.
 */
const CHECK_WHERE = `account_id = $1 AND ($4::text IS NULL OR check_type = $4)
  AND ($5::text[] IS NULL OR seq IN (SELECT check_seq FROM check_tags WHERE account_id = $1 AND tag = ANY($5::text[])))
  AND ($6::text IS NULL OR strpos(name_folded, $6) > 0)
  AND ($7::text IS NULL OR (check_type = 'API' AND strpos(lower(replace(body, '\\u0000', '')::json -> 'request' ->> 'url'), $7) > 0))`
// (the body read as json, not jsonb: it may hold "\u0000", which jsonb refuses; its escapes of NUL are dropped first)
const STATUS_WHERE: Record<CheckStatusFilter, string> = {
  passing: 'NOT has_failures AND NOT has_errors AND NOT is_degraded',
  failing: '(has_failures OR has_errors)',
  degraded: 'is_degraded AND NOT has_failures AND NOT has_errors',
}

/*
 * A check is stored as the text GET answers (the validated body plus id, checkType,
 * created_at and updated_at), so reads never re-serialize; tags are indexed beside it.
 * A list page is one statement (one snapshot): the page's answers joined by the database,
 * their count and the total. Nothing is cached: another server may have written since.
 */
export function checkRepository(sql: Sql, clock: Clock): CheckStore {
  const record = (id: string, checkType: string, json: string): CheckRecord => ({ id, checkType, json })
  const insertTags = `INSERT INTO check_tags (check_seq, account_id, tag) SELECT DISTINCT $1::bigint, $2::text, t FROM unnest($3::text[]) AS t
    ON CONFLICT DO NOTHING`

  return {
    list: async (account, query): Promise<CheckPage | null> => {
      const where =
        query.status === undefined
          ? CHECK_WHERE
          : `${CHECK_WHERE} AND id IN (SELECT check_id FROM check_statuses WHERE account_id = $1 AND ${STATUS_WHERE[query.status]})`
      const filters = [query.checkType ?? null, query.tags ?? null, query.search ?? null, query.apiUrl ?? null]
      if (query.after !== undefined) {
        // keyset: from the check named, one row more than asked (whether another page follows); no total
        const [row] = await sql.rows<{ found: boolean; count: number; json: string | null; last_id: string | null }>(
          `WITH start AS (SELECT seq FROM checks WHERE id = $3 AND account_id = $1),
                page AS (SELECT seq, id, body FROM checks WHERE ${where} AND seq > (SELECT seq FROM start) ORDER BY seq LIMIT $2 + 1)
           SELECT EXISTS (SELECT 1 FROM start) AS found, (SELECT count(*) FROM page)::int AS count,
                  (SELECT string_agg(body, ',' ORDER BY seq) FROM (SELECT seq, body FROM page ORDER BY seq LIMIT $2) AS shown) AS json,
                  (SELECT id FROM (SELECT seq, id FROM page ORDER BY seq LIMIT $2) AS shown ORDER BY seq DESC LIMIT 1) AS last_id`,
          [account, query.limit, query.after, ...filters],
        )
        if (!row.found) return null
        const more = row.count > query.limit
        return { json: Buffer.from(`[${row.json ?? ''}]`), count: more ? query.limit : row.count, lastId: row.last_id ?? undefined, more }
      }
      const [row] = await sql.rows<{ total: number; count: number; json: string | null; last_id: string | null }>(
        `WITH page AS (SELECT seq, id, body FROM checks WHERE ${where} ORDER BY seq LIMIT $2 OFFSET $3)
         SELECT (SELECT count(*) FROM checks WHERE ${where})::int AS total, (SELECT count(*) FROM page)::int AS count,
                (SELECT string_agg(body, ',' ORDER BY seq) FROM page) AS json,
                (SELECT id FROM page ORDER BY seq DESC LIMIT 1) AS last_id`,
        [account, query.limit, query.offset, ...filters],
      )
      return {
        json: Buffer.from(`[${row.json ?? ''}]`),
        count: row.count,
        total: row.total,
        lastId: row.last_id ?? undefined,
        more: query.offset + row.count < row.total,
      }
    },
    get: async (account, id) => {
      const [row] = await sql.rows<{ check_type: string; body: string }>(`SELECT check_type, body FROM checks WHERE id = $1 AND account_id = $2`, [id, account])
      return row && record(id, row.check_type, row.body)
    },
    create: (account: string, type: CheckType, data: CheckData) =>
      sql.atomic(async (tx) => {
        const id = randomUUID()
        const json = JSON.stringify({ id, ...data, created_at: new Date(clock.now()).toISOString(), updated_at: null })
        const [{ seq }] = await tx.rows<{ seq: number }>(
          `INSERT INTO checks (id, account_id, check_type, activated, body, name_folded) VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq`,
          [id, account, type, data.activated !== false, json, foldedName(data)],
        )
        if (data.tags.length > 0) await tx.run(insertTags, [seq, account, data.tags])
        return record(id, type, json)
      }),
    replace: (account, id, type, data) =>
      sql.atomic(async (tx) => {
        const [row] = await tx.rows<{ seq: number; check_type: string; body: string }>(
          `SELECT seq, check_type, body FROM checks WHERE id = $1 AND account_id = $2 FOR UPDATE`,
          [id, account],
        )
        if (!row || row.check_type !== type) return undefined
        const previous = JSON.parse(row.body) as { created_at: string; activated?: boolean }
        const json = JSON.stringify({ id, ...data, created_at: previous.created_at, updated_at: new Date(clock.now()).toISOString() })
        await tx.run(`UPDATE checks SET body = $1, activated = $2, name_folded = $3 WHERE seq = $4`, [
          json,
          data.activated !== false,
          foldedName(data),
          row.seq,
        ])
        // a check paused or resumed: the scheduled runs planned before (and never claimed) are skipped
        if ((previous.activated !== false) !== (data.activated !== false)) {
          await tx.run(
            `UPDATE check_runs SET state = 'skipped', done_at = $1, skip_reason = 'paused'
          WHERE check_id = $2 AND state = 'due' AND session_id IS NULL AND claim_seq = 0`,
            [clock.now(), id],
          )
        }
        await tx.run(`DELETE FROM check_tags WHERE check_seq = $1`, [row.seq])
        if (data.tags.length > 0) await tx.run(insertTags, [row.seq, account, data.tags])
        return record(id, type, json)
      }),
    delete: async (account, id) => (await sql.run(`DELETE FROM checks WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    // the table's oid too: a database restored (made again from a dump) counts again from where the dump was, in another table
    listVersion: async (account) =>
      (
        await sql.rows<{ v: string }>(`SELECT 'list_versions'::regclass::oid::text || '.' || epoch || '.' || n AS v FROM list_versions WHERE account_id = $1`, [
          account,
        ])
      )[0]?.v,
  }
}
