import type { KeySetup, KeyStore } from '../index.js'
import type { Sql } from './index.js'
import { defaultAccountId, generateKey, hashKey } from '../../keys.js'
import { UserError } from '../../../errors.js'

/** Servers starting at the same moment set their keys up one after the other (an advisory lock). */
const KEYS_LOCK = 7_266_736_173

export function keyRepository(sql: Sql): KeyStore {
  return {
    setUp: (given) => {
      for (const { key } of given) if (!key) throw new UserError('An API key cannot be empty')
      return sql.atomic(async (tx): Promise<KeySetup> => {
        await tx.rows('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK])
        const time = new Date().toISOString()
        if (given.length > 0) {
          await tx.run(`DELETE FROM api_keys WHERE source = 'option'`)
          for (const { key, accountId } of given) {
            await tx.run(
              `INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES ($1, $2, 'option', $3)
               ON CONFLICT (key_hash) DO UPDATE SET account_id = excluded.account_id`,
              [hashKey(key), accountId || defaultAccountId(key), time],
            )
          }
          const first = given[0]
          return { apiKey: first.key, accountId: first.accountId || defaultAccountId(first.key), generated: false }
        }
        const [existing] = await tx.rows<{ account_id: string }>(`SELECT account_id FROM api_keys ORDER BY created_at, seq LIMIT 1`)
        if (existing) return { accountId: existing.account_id, generated: false }
        const key = generateKey()
        await tx.run(`INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES ($1, 'local', 'generated', $2)`, [hashKey(key), time])
        return { apiKey: key, accountId: 'local', generated: true }
      })
    },
    find: async (keyHash) => {
      const [row] = await sql.rows<{ key_hash: string; account_id: string }>(`SELECT key_hash, account_id FROM api_keys WHERE key_hash = $1`, [keyHash])
      return row && { keyHash: row.key_hash, accountId: row.account_id }
    },
    accounts: async () => (await sql.rows<{ account_id: string }>(`SELECT DISTINCT account_id FROM api_keys ORDER BY account_id`)).map((r) => r.account_id),
  }
}
