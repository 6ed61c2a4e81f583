import { randomUUID } from 'node:crypto'
import type { Clock } from '../../../runner/clock.js'
import type { Db } from './migrations.js'
import type { PrivateLocationLoad, PrivateLocationStore } from '../index.js'
import type { Exec } from './index.js'
import { namesSlug, PRIVATE_LOCATION_COLUMNS as COLUMNS, privateLocationRecord, slugPattern, type PrivateLocationRow } from '../private-location-rows.js'

/** Private locations of an account, and what their agents are doing. */
export function privateLocationRepository(db: Db, exec: Exec, clock: Clock): PrivateLocationStore {
  const now = () => new Date(clock.now()).toISOString()
  const list = db.prepare(`SELECT ${COLUMNS} FROM private_locations WHERE account_id = ? ORDER BY seq`)
  const all = db.prepare(`SELECT account_id, ${COLUMNS} FROM private_locations ORDER BY seq`)
  const byId = db.prepare(`SELECT ${COLUMNS} FROM private_locations WHERE id = ? AND account_id = ?`)
  const bySlug = db.prepare(`SELECT ${COLUMNS} FROM private_locations WHERE slug_name = ? AND account_id = ?`)
  const insert = db.prepare(`INSERT INTO private_locations (id, account_id, slug_name, name, icon, proxy_url, created_at, updated_at)
    VALUES (@id, @account, @slugName, @name, @icon, @proxyUrl, @createdAt, NULL) ON CONFLICT (account_id, slug_name) DO NOTHING`)
  const update = db.prepare(`UPDATE private_locations SET name = @name, icon = @icon, proxy_url = @proxyUrl, updated_at = @updatedAt
    WHERE id = @id AND account_id = @account`)
  const remove = db.prepare(`DELETE FROM private_locations WHERE id = ? AND account_id = ?`)
  const checks = db.prepare(`SELECT id, body FROM checks WHERE account_id = ? AND body LIKE ? ORDER BY seq`)
  const groups = db.prepare(`SELECT id, body FROM check_groups WHERE account_id = ? AND body LIKE ? ORDER BY id`)
  const seen = db.prepare(`UPDATE private_locations SET last_seen_at = @now
    WHERE account_id = @account AND slug_name IN (SELECT value FROM json_each(@slugs))`)
  const agents = db.prepare(`SELECT p.account_id AS account, p.slug_name AS slug, count(a.agent_id) AS n FROM private_locations p
    LEFT JOIN agent_locations a ON a.account_id = p.account_id AND a.location = p.slug_name AND a.expires_at > @now
    WHERE (@account IS NULL OR p.account_id = @account) GROUP BY p.account_id, p.slug_name`)
  const waiting = db.prepare(`SELECT r.account_id AS account, r.location AS slug, count(*) AS n, min(r.due_at) AS oldest
    FROM check_runs r JOIN private_locations p ON p.account_id = r.account_id AND p.slug_name = r.location
    WHERE r.state = 'due' AND r.due_at <= @now AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= @now)
      AND (r.stale_at IS NULL OR r.stale_at > @now) AND (@account IS NULL OR r.account_id = @account)
    GROUP BY r.account_id, r.location`)
  const noAgentSince = db.prepare(`UPDATE private_locations SET no_agent_since = @since
    WHERE id = @id AND account_id = @account AND (@since IS NULL OR no_agent_since IS NULL)`)
  const alerted = db.prepare(`UPDATE private_locations SET alerted_at = @at WHERE id = @id AND account_id = @account AND alerted_at IS NULL`)
  const recovered = db.prepare(`UPDATE private_locations SET alerted_at = NULL WHERE id = @id AND account_id = @account AND alerted_at IS NOT NULL`)
  const get = (account: string, id: string) => {
    const row = byId.get(id, account) as PrivateLocationRow | undefined
    return row && privateLocationRecord(row)
  }
  return {
    list: (account) => exec(() => (list.all(account) as PrivateLocationRow[]).map(privateLocationRecord)),
    all: () =>
      exec(() => (all.all() as Array<PrivateLocationRow & { account_id: string }>).map((row) => ({ ...privateLocationRecord(row), account: row.account_id }))),
    get: (account, id) => exec(() => get(account, id)),
    bySlug: (account, slug) =>
      exec(() => {
        const row = bySlug.get(slug, account) as PrivateLocationRow | undefined
        return row && privateLocationRecord(row)
      }),
    create: (account, data) =>
      exec(() => {
        const id = randomUUID()
        const added = insert.run({ id, account, slugName: data.slugName, name: data.name, icon: data.icon, proxyUrl: data.proxyUrl, createdAt: now() }).changes
        return added === 0 ? 'exists' : get(account, id)!
      }),
    update: (account, id, data) =>
      exec(() => {
        const changed = update.run({ id, account, name: data.name, icon: data.icon, proxyUrl: data.proxyUrl, updatedAt: now() }).changes
        return changed === 0 ? undefined : get(account, id)
      }),
    // its keys go with it (api_keys.location_id, ON DELETE CASCADE), and their dashboard sessions with them
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
    usedBy: (account, slug) =>
      exec(() => ({
        checks: (checks.all(account, slugPattern(slug)) as Array<{ id: string; body: string }>).filter((r) => namesSlug(r.body, slug)).map((r) => r.id),
        groups: (groups.all(account, slugPattern(slug)) as Array<{ id: number; body: string }>).filter((r) => namesSlug(r.body, slug)).map((r) => r.id),
      })),
    seen: (account, slugs, at) =>
      exec(() => {
        if (slugs.length > 0) seen.run({ account, slugs: JSON.stringify(slugs), now: at })
      }),
    load: (at, account) =>
      exec(() => {
        const params = { now: at, account: account ?? null }
        const out = new Map<string, PrivateLocationLoad>()
        for (const row of agents.all(params) as Array<{ account: string; slug: string; n: number }>) {
          out.set(`${row.account}\u0000${row.slug}`, { account: row.account, slugName: row.slug, agents: row.n, waiting: 0, oldestDueAt: null })
        }
        for (const row of waiting.all(params) as Array<{ account: string; slug: string; n: number; oldest: number }>) {
          const entry = out.get(`${row.account}\u0000${row.slug}`)
          if (entry) Object.assign(entry, { waiting: row.n, oldestDueAt: row.oldest })
        }
        return [...out.values()]
      }),
    setNoAgentSince: (account, id, since) =>
      exec(() => {
        noAgentSince.run({ id, account, since })
      }),
    markAlerted: (account, id, at) => exec(() => (at === null ? recovered.run({ id, account }) : alerted.run({ id, account, at })).changes > 0),
  }
}
