import type { Db } from './migrations.js'
import type { KeyRecord, KeySetup, KeyStore, WebSessionStore } from '../index.js'
import type { Exec } from './index.js'
import { DEFAULT_ROLE, defaultAccountId, generateKey, hashKey, keyPrefix, newKeyId } from '../../keys.js'
import { keyRecord, type KeyRow } from '../key-rows.js'
import { UserError } from '../../../errors.js'
import type { Clock } from '../../../runner/clock.js'

const COLUMNS = 'id, prefix, account_id, role, name, source, created_at, last_used_at, location_id, key_end'

export function keyRepository(db: Db, exec: Exec, clock: Clock): KeyStore {
  const find = db.prepare(`SELECT key_hash, ${COLUMNS} FROM api_keys WHERE key_hash = ?`)
  const accounts = db.prepare(`SELECT DISTINCT account_id FROM api_keys ORDER BY account_id`)
  const insert = db.prepare(`INSERT INTO api_keys (key_hash, id, prefix, account_id, role, name, source, created_at, location_id, key_end)
    VALUES (@keyHash, @id, @prefix, @accountId, @role, @name, @source, @createdAt, @locationId, @keyEnd)`)
  const setUp = db.transaction((given: Array<{ key: string; accountId?: string; role?: KeyRecord['role'] }>): KeySetup => {
    const time = new Date(clock.now()).toISOString()
    if (given.length > 0) {
      // added, or updated with what was given; every other key stays as it is
      const update = db.prepare(`UPDATE api_keys SET account_id = coalesce(@accountId, account_id), role = coalesce(@role, role) WHERE key_hash = @keyHash`)
      for (const { key, accountId, role } of given) {
        if (!key) throw new UserError('An API key cannot be empty')
        const keyHash = hashKey(key)
        if (update.run({ keyHash, accountId: accountId || null, role: role ?? null }).changes === 0) {
          insert.run({
            keyHash,
            id: newKeyId(),
            prefix: keyPrefix(key),
            accountId: accountId || defaultAccountId(key),
            role: role ?? DEFAULT_ROLE,
            name: null,
            source: 'option',
            createdAt: time,
            locationId: null,
            keyEnd: '',
          })
        }
      }
      const first = find.get(hashKey(given[0].key)) as KeyRow
      return { apiKey: given[0].key, accountId: first.account_id, generated: false }
    }
    const existing = db.prepare(`SELECT account_id FROM api_keys ORDER BY created_at, rowid LIMIT 1`).get() as { account_id: string } | undefined
    if (existing) return { accountId: existing.account_id, generated: false }
    const key = generateKey()
    insert.run({
      keyHash: hashKey(key),
      id: newKeyId(),
      prefix: keyPrefix(key),
      accountId: 'local',
      role: DEFAULT_ROLE,
      name: null,
      source: 'generated',
      createdAt: time,
      locationId: null,
      keyEnd: '',
    })
    return { apiKey: key, accountId: 'local', generated: true }
  })
  return {
    setUp: (given) => exec(() => setUp.immediate(given)),
    find: (keyHash) =>
      exec(() => {
        const row = find.get(keyHash) as (KeyRow & { key_hash: string }) | undefined
        return row && { ...keyRecord(row), keyHash: row.key_hash }
      }),
    create: (key, data) =>
      exec(() => {
        const record = {
          keyHash: hashKey(key),
          id: newKeyId(),
          prefix: keyPrefix(key),
          accountId: data.accountId,
          role: data.role,
          name: data.name ?? null,
          source: 'created',
          createdAt: new Date(clock.now()).toISOString(),
          locationId: data.locationId ?? null,
          keyEnd: data.locationId ? key.slice(-4) : '',
        }
        insert.run(record)
        return keyRecord(find.get(record.keyHash) as KeyRow)
      }),
    list: (accountId) =>
      exec(() => {
        const rows = (
          accountId === undefined
            ? db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, rowid`).all()
            : db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at, rowid`).all(accountId)
        ) as KeyRow[]
        return rows.map(keyRecord)
      }),
    revoke: (id, accountId) =>
      exec(() => {
        // the key's dashboard sessions go with it (ON DELETE CASCADE)
        const row = (
          accountId === undefined
            ? db.prepare(`DELETE FROM api_keys WHERE id = ? RETURNING ${COLUMNS}`).get(id)
            : db.prepare(`DELETE FROM api_keys WHERE id = ? AND account_id = ? RETURNING ${COLUMNS}`).get(id, accountId)
        ) as KeyRow | undefined
        return row && keyRecord(row)
      }),
    touch: (id, at) =>
      exec(() => {
        db.prepare(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`).run(at, id)
      }),
    accounts: () => exec(() => (accounts.all() as Array<{ account_id: string }>).map((r) => r.account_id)),
  }
}

export function webSessionRepository(db: Db, exec: Exec): WebSessionStore {
  const find = db.prepare(`SELECT s.key_id, s.csrf, s.expires_at, k.account_id, k.role FROM web_sessions s JOIN api_keys k ON k.id = s.key_id
    WHERE s.id_hash = ? AND s.expires_at > ?`)
  const insert = db.prepare(`INSERT INTO web_sessions (id_hash, key_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`)
  const prune = db.prepare(`DELETE FROM web_sessions WHERE expires_at <= ?`)
  return {
    create: (idHash, data, now) =>
      exec(() => {
        prune.run(now)
        insert.run(idHash, data.keyId, data.csrf, new Date(now).toISOString(), data.expiresAt)
      }),
    find: (idHash, now) =>
      exec(() => {
        const row = find.get(idHash, now) as { key_id: string; csrf: string; expires_at: number; account_id: string; role: KeyRecord['role'] } | undefined
        return row && { keyId: row.key_id, csrf: row.csrf, expiresAt: row.expires_at, accountId: row.account_id, role: row.role }
      }),
    delete: (idHash) =>
      exec(() => {
        db.prepare(`DELETE FROM web_sessions WHERE id_hash = ?`).run(idHash)
      }),
    prune: (now) => exec(() => prune.run(now).changes),
  }
}
