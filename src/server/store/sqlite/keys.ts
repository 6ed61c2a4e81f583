import type { Db } from './migrations.js'
import type { KeySetup, KeyStore } from '../index.js'
import type { Exec } from './index.js'
import { defaultAccountId, generateKey, hashKey } from '../../keys.js'
import { UserError } from '../../../errors.js'

export function keyRepository(db: Db, exec: Exec): KeyStore {
  const find = db.prepare(`SELECT key_hash, account_id FROM api_keys WHERE key_hash = ?`)
  const accounts = db.prepare(`SELECT DISTINCT account_id FROM api_keys ORDER BY account_id`)
  const setUp = db.transaction((given: Array<{ key: string; accountId?: string }>): KeySetup => {
    const time = new Date().toISOString()
    if (given.length > 0) {
      db.prepare(`DELETE FROM api_keys WHERE source = 'option'`).run()
      const upsert = db.prepare(
        `INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES (?, ?, 'option', ?)
         ON CONFLICT (key_hash) DO UPDATE SET account_id = excluded.account_id`,
      )
      for (const { key, accountId } of given) {
        if (!key) throw new UserError('An API key cannot be empty')
        upsert.run(hashKey(key), accountId || defaultAccountId(key), time)
      }
      const first = given[0]
      return { apiKey: first.key, accountId: first.accountId || defaultAccountId(first.key), generated: false }
    }
    const existing = db.prepare(`SELECT account_id FROM api_keys ORDER BY created_at, rowid LIMIT 1`).get() as { account_id: string } | undefined
    if (existing) return { accountId: existing.account_id, generated: false }
    const key = generateKey()
    db.prepare(`INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES (?, 'local', 'generated', ?)`).run(hashKey(key), time)
    return { apiKey: key, accountId: 'local', generated: true }
  })
  return {
    setUp: (given) => exec(() => setUp.immediate(given)),
    find: (keyHash) => exec(() => {
      const row = find.get(keyHash) as { key_hash: string; account_id: string } | undefined
      return row && { keyHash: row.key_hash, accountId: row.account_id }
    }),
    accounts: () => exec(() => (accounts.all() as Array<{ account_id: string }>).map((r) => r.account_id)),
  }
}
