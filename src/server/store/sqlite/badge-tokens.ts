import type { Db } from './migrations.js'
import type { BadgeSubjectKind, BadgeTokenRecord, BadgeTokenStore } from '../index.js'
import type { Exec } from './index.js'

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

export function badgeTokenRepository(db: Db, exec: Exec): BadgeTokenStore {
  const find = db.prepare(`SELECT ${COLUMNS} FROM badge_tokens WHERE token_hash = ?`)
  const get = (account: string, kind: BadgeSubjectKind, id: string) =>
    db
      .prepare(`SELECT ${COLUMNS} FROM badge_tokens WHERE account_id = ? AND subject_kind = ? AND ${SUBJECT[kind]} = ?`)
      .get(account, kind, subject(kind, id)) as Row | undefined
  const remove = (account: string, kind: BadgeSubjectKind, id: string) =>
    db.prepare(`DELETE FROM badge_tokens WHERE account_id = ? AND subject_kind = ? AND ${SUBJECT[kind]} = ?`).run(account, kind, subject(kind, id)).changes > 0
  const set = db.transaction((account: string, kind: BadgeSubjectKind, id: string, token: { token: string; tokenHash: string }, now: number) => {
    remove(account, kind, id)
    db.prepare(`INSERT INTO badge_tokens (token_hash, account_id, subject_kind, ${SUBJECT[kind]}, token, created_at) VALUES (?, ?, ?, ?, ?, ?)`).run(
      token.tokenHash,
      account,
      kind,
      subject(kind, id),
      token.token,
      new Date(now).toISOString(),
    )
    return plain(record(get(account, kind, id) as Row))
  })
  return {
    list: (account, kind) =>
      exec(() =>
        (
          db.prepare(`SELECT ${COLUMNS} FROM badge_tokens WHERE account_id = ? AND subject_kind = ? ORDER BY created_at, rowid`).all(account, kind) as Row[]
        ).map((row) => plain(record(row))),
      ),
    get: (account, kind, id) =>
      exec(() => {
        const row = get(account, kind, id)
        return row && plain(record(row))
      }),
    // inside a transaction already (the store's tx repositories), the nested one is a savepoint
    set: (account, kind, id, token, now) => exec(() => set(account, kind, id, token, now)),
    delete: (account, kind, id) => exec(() => remove(account, kind, id)),
    find: (tokenHash) =>
      exec(() => {
        const row = find.get(tokenHash) as Row | undefined
        return row && record(row)
      }),
  }
}
