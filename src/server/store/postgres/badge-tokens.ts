import type { BadgeSubjectKind, BadgeTokenRecord, BadgeTokenStore } from '../index.js'
import type { Sql } from './index.js'

/** The column naming a token's subject, per kind. */
const SUBJECT: Record<BadgeSubjectKind, 'check_id' | 'group_id'> = { check: 'check_id', group: 'group_id' }

interface Row {
  token: string
  subject_kind: BadgeSubjectKind
  check_id: string | null
  group_id: number | string | null
  created_at: string
  account_id: string
}

const record = (row: Row): BadgeTokenRecord & { account: string } => ({
  token: row.token,
  subjectKind: row.subject_kind,
  subjectId: String(row[SUBJECT[row.subject_kind]]),
  created_at: row.created_at,
  account: row.account_id,
})
/** The subject's id as its column holds it: a group's is a number. */
const subject = (kind: BadgeSubjectKind, id: string): string | number => (kind === 'group' ? Number(id) : id)
const plain = ({ account: _account, ...rest }: BadgeTokenRecord & { account: string }): BadgeTokenRecord => rest

const COLUMNS = 'token, subject_kind, check_id, group_id, created_at, account_id'

export function badgeTokenRepository(sql: Sql): BadgeTokenStore {
  return {
    list: async (account, kind) =>
      (
        await sql.rows<Row>(`SELECT ${COLUMNS} FROM badge_tokens WHERE account_id = $1 AND subject_kind = $2 ORDER BY created_at, token_hash`, [account, kind])
      ).map((row) => plain(record(row))),
    get: async (account, kind, id) => {
      const [row] = await sql.rows<Row>(`SELECT ${COLUMNS} FROM badge_tokens WHERE account_id = $1 AND subject_kind = $2 AND ${SUBJECT[kind]} = $3`, [
        account,
        kind,
        subject(kind, id),
      ])
      return row && plain(record(row))
    },
    set: (account, kind, id, token, now) =>
      sql.atomic(async (tx) => {
        await tx.run(`DELETE FROM badge_tokens WHERE account_id = $1 AND subject_kind = $2 AND ${SUBJECT[kind]} = $3`, [account, kind, subject(kind, id)])
        const [row] = await tx.rows<Row>(
          `INSERT INTO badge_tokens (token_hash, account_id, subject_kind, ${SUBJECT[kind]}, token, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
          [token.tokenHash, account, kind, subject(kind, id), token.token, new Date(now).toISOString()],
        )
        return plain(record(row))
      }),
    delete: async (account, kind, id) =>
      (await sql.run(`DELETE FROM badge_tokens WHERE account_id = $1 AND subject_kind = $2 AND ${SUBJECT[kind]} = $3`, [account, kind, subject(kind, id)])) > 0,
    find: async (tokenHash) => {
      const [row] = await sql.rows<Row>(`SELECT ${COLUMNS} FROM badge_tokens WHERE token_hash = $1`, [tokenHash])
      return row && record(row)
    },
  }
}
