import type { KeyRecord, KeySetup, KeyStore, WebSessionStore } from '../index.js'
import type { Sql } from './index.js'
import { DEFAULT_ROLE, defaultAccountId, generateKey, hashKey, keyPrefix, newKeyId } from '../../keys.js'
import { keyRecord, type KeyRow } from '../key-rows.js'
import { UserError } from '../../../errors.js'
import type { Clock } from '../../../runner/clock.js'

/** Servers starting at the same moment set their keys up one after the other (an advisory lock). */
const KEYS_LOCK = 7_266_736_173

const COLUMNS = 'id, prefix, account_id, role, name, source, created_at, last_used_at, location_id, key_end'
const INSERT = `INSERT INTO api_keys (key_hash, id, prefix, account_id, role, name, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
const INSERT_OF_LOCATION = `INSERT INTO api_keys (key_hash, id, prefix, account_id, role, name, source, created_at, location_id, key_end)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

export function keyRepository(sql: Sql, clock: Clock): KeyStore {
  return {
    setUp: (given) => {
      for (const { key } of given) if (!key) throw new UserError('An API key cannot be empty')
      return sql.atomic(async (tx): Promise<KeySetup> => {
        await tx.rows('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK])
        const time = new Date(clock.now()).toISOString()
        if (given.length > 0) {
          // added, or updated with what was given; every other key stays as it is
          for (const { key, accountId, role } of given) {
            const keyHash = hashKey(key)
            const updated = await tx.run(`UPDATE api_keys SET account_id = coalesce($2, account_id), role = coalesce($3, role) WHERE key_hash = $1`, [
              keyHash,
              accountId || null,
              role ?? null,
            ])
            if (updated === 0)
              await tx.run(INSERT, [keyHash, newKeyId(), keyPrefix(key), accountId || defaultAccountId(key), role ?? DEFAULT_ROLE, null, 'option', time])
          }
          const [first] = await tx.rows<{ account_id: string }>(`SELECT account_id FROM api_keys WHERE key_hash = $1`, [hashKey(given[0].key)])
          return { apiKey: given[0].key, accountId: first.account_id, generated: false }
        }
        const [existing] = await tx.rows<{ account_id: string }>(`SELECT account_id FROM api_keys ORDER BY created_at, seq LIMIT 1`)
        if (existing) return { accountId: existing.account_id, generated: false }
        const key = generateKey()
        await tx.run(INSERT, [hashKey(key), newKeyId(), keyPrefix(key), 'local', DEFAULT_ROLE, null, 'generated', time])
        return { apiKey: key, accountId: 'local', generated: true }
      })
    },
    find: async (keyHash) => {
      const [row] = await sql.rows<KeyRow & { key_hash: string }>(`SELECT key_hash, ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash])
      return row && { ...keyRecord(row), keyHash: row.key_hash }
    },
    create: async (key, data) => {
      const [row] = await sql.rows<KeyRow>(`${INSERT_OF_LOCATION} RETURNING ${COLUMNS}`, [
        hashKey(key),
        newKeyId(),
        keyPrefix(key),
        data.accountId,
        data.role,
        data.name ?? null,
        'created',
        new Date(clock.now()).toISOString(),
        data.locationId ?? null,
        data.locationId ? key.slice(-4) : '',
      ])
      return keyRecord(row)
    },
    list: async (accountId) => {
      const rows =
        accountId === undefined
          ? await sql.rows<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, seq`)
          : await sql.rows<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, seq`, [accountId])
      return rows.map(keyRecord)
    },
    revoke: async (id, accountId) => {
      // the key's dashboard sessions go with it (ON DELETE CASCADE)
      const [row] =
        accountId === undefined
          ? await sql.rows<KeyRow>(`DELETE FROM api_keys WHERE id = $1 RETURNING ${COLUMNS}`, [id])
          : await sql.rows<KeyRow>(`DELETE FROM api_keys WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`, [id, accountId])
      return row && keyRecord(row)
    },
    touch: async (id, at) => {
      await sql.run(`UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, [id, at])
    },
    accounts: async () => (await sql.rows<{ account_id: string }>(`SELECT DISTINCT account_id FROM api_keys ORDER BY account_id`)).map((r) => r.account_id),
  }
}

export function webSessionRepository(sql: Sql): WebSessionStore {
  return {
    create: async (idHash, data, now) => {
      await sql.run(`DELETE FROM web_sessions WHERE expires_at <= $1`, [now])
      await sql.run(`INSERT INTO web_sessions (id_hash, key_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
        idHash,
        data.keyId,
        data.csrf,
        new Date(now).toISOString(),
        data.expiresAt,
      ])
    },
    find: async (idHash, now) => {
      const [row] = await sql.rows<{ key_id: string; csrf: string; expires_at: number; account_id: string; role: KeyRecord['role'] }>(
        `SELECT s.key_id, s.csrf, s.expires_at, k.account_id, k.role FROM web_sessions s JOIN api_keys k ON k.id = s.key_id
         WHERE s.id_hash = $1 AND s.expires_at > $2`,
        [idHash, now],
      )
      return row && { keyId: row.key_id, csrf: row.csrf, expiresAt: row.expires_at, accountId: row.account_id, role: row.role }
    },
    delete: async (idHash) => {
      await sql.run(`DELETE FROM web_sessions WHERE id_hash = $1`, [idHash])
    },
    prune: (now) => sql.run(`DELETE FROM web_sessions WHERE expires_at <= $1`, [now]),
  }
}
