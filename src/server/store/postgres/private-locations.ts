import { randomUUID } from 'node:crypto'
import type { Clock } from '../../../runner/clock.js'
import type { PrivateLocationLoad, PrivateLocationStore } from '../index.js'
import type { Sql } from './index.js'
import { namesSlug, PRIVATE_LOCATION_COLUMNS as COLUMNS, privateLocationRecord, slugPattern, type PrivateLocationRow } from '../private-location-rows.js'

/** Private locations of an account, and what their agents are doing. */
export function privateLocationRepository(sql: Sql, clock: Clock): PrivateLocationStore {
  const now = () => new Date(clock.now()).toISOString()
  const one = async (text: string, values: unknown[]) => {
    const [row] = await sql.rows<PrivateLocationRow>(text, values)
    return row && privateLocationRecord(row)
  }
  return {
    list: async (account) =>
      (await sql.rows<PrivateLocationRow>(`SELECT ${COLUMNS} FROM private_locations WHERE account_id = $1 ORDER BY seq`, [account])).map(privateLocationRecord),
    all: async () =>
      (await sql.rows<PrivateLocationRow & { account_id: string }>(`SELECT account_id, ${COLUMNS} FROM private_locations ORDER BY seq`)).map((row) => ({
        ...privateLocationRecord(row),
        account: row.account_id,
      })),
    get: (account, id) => one(`SELECT ${COLUMNS} FROM private_locations WHERE id = $1 AND account_id = $2`, [id, account]),
    bySlug: (account, slug) => one(`SELECT ${COLUMNS} FROM private_locations WHERE slug_name = $1 AND account_id = $2`, [slug, account]),
    create: async (account, data) => {
      const record = await one(
        `INSERT INTO private_locations (id, account_id, slug_name, name, icon, proxy_url, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, NULL) ON CONFLICT (account_id, slug_name) DO NOTHING RETURNING ${COLUMNS}`,
        [randomUUID(), account, data.slugName, data.name, data.icon, data.proxyUrl, now()],
      )
      return record ?? 'exists'
    },
    update: (account, id, data) =>
      one(
        `UPDATE private_locations SET name = $3, icon = $4, proxy_url = $5, updated_at = $6
      WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`,
        [id, account, data.name, data.icon, data.proxyUrl, now()],
      ),
    // its keys go with it (api_keys.location_id, ON DELETE CASCADE), and their dashboard sessions with them
    delete: async (account, id) => (await sql.run(`DELETE FROM private_locations WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    usedBy: async (account, slug) => {
      const checks = await sql.rows<{ id: string; body: string }>(`SELECT id, body FROM checks WHERE account_id = $1 AND body LIKE $2 ORDER BY seq`, [
        account,
        slugPattern(slug),
      ])
      const groups = await sql.rows<{ id: number; body: string }>(`SELECT id, body FROM check_groups WHERE account_id = $1 AND body LIKE $2 ORDER BY id`, [
        account,
        slugPattern(slug),
      ])
      return {
        checks: checks.filter((r) => namesSlug(r.body, slug)).map((r) => r.id),
        groups: groups.filter((r) => namesSlug(r.body, slug)).map((r) => Number(r.id)),
      }
    },
    seen: async (account, slugs, at) => {
      if (slugs.length > 0)
        await sql.run(`UPDATE private_locations SET last_seen_at = $3 WHERE account_id = $1 AND slug_name = ANY($2::text[])`, [account, slugs, at])
    },
    load: async (at, account) => {
      const agents = await sql.rows<{ account: string; slug: string; n: string }>(
        `SELECT p.account_id AS account, p.slug_name AS slug, count(a.agent_id) AS n
        FROM private_locations p
        LEFT JOIN agent_locations a ON a.account_id = p.account_id AND a.location = p.slug_name AND a.expires_at > $1
        WHERE ($2::text IS NULL OR p.account_id = $2) GROUP BY p.account_id, p.slug_name`,
        [at, account ?? null],
      )
      const waiting = await sql.rows<{ account: string; slug: string; n: string; oldest: string }>(
        `SELECT r.account_id AS account, r.location AS slug,
          count(*) AS n, min(r.due_at) AS oldest
        FROM check_runs r JOIN private_locations p ON p.account_id = r.account_id AND p.slug_name = r.location
        WHERE r.state = 'due' AND r.due_at <= $1 AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= $1)
          AND (r.stale_at IS NULL OR r.stale_at > $1) AND ($2::text IS NULL OR r.account_id = $2)
        GROUP BY r.account_id, r.location`,
        [at, account ?? null],
      )
      const out = new Map<string, PrivateLocationLoad>()
      for (const row of agents)
        out.set(`${row.account}\u0000${row.slug}`, { account: row.account, slugName: row.slug, agents: Number(row.n), waiting: 0, oldestDueAt: null })
      for (const row of waiting) {
        const entry = out.get(`${row.account}\u0000${row.slug}`)
        if (entry) Object.assign(entry, { waiting: Number(row.n), oldestDueAt: Number(row.oldest) })
      }
      return [...out.values()]
    },
    setNoAgentSince: async (account, id, since) => {
      await sql.run(`UPDATE private_locations SET no_agent_since = $3 WHERE id = $1 AND account_id = $2 AND ($3::bigint IS NULL OR no_agent_since IS NULL)`, [
        id,
        account,
        since,
      ])
    },
    markAlerted: async (account, id, at) =>
      (at === null
        ? await sql.run(`UPDATE private_locations SET alerted_at = NULL WHERE id = $1 AND account_id = $2 AND alerted_at IS NOT NULL`, [id, account])
        : await sql.run(`UPDATE private_locations SET alerted_at = $3 WHERE id = $1 AND account_id = $2 AND alerted_at IS NULL`, [id, account, at])) > 0,
  }
}
