import { existsSync } from 'node:fs'
import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { io } from '../io.js'
import { nativeLoadError } from '../target.js'
import { UserError } from '../../errors.js'
import { KEY_ROLES, presentKey, type KeyRole } from '../../server/keys.js'
import { DEFAULT_DB, shownDb } from './server.js'
import { commandLineWarning, hideSecretArguments, readSecretFile, urlPassword } from '../secrets.js'

interface KeysArgs {
  action: 'create' | 'list' | 'revoke'
  id?: string
  db?: string
  dbFile?: string
  account?: string
  role?: KeyRole
  name?: string
  format: 'text' | 'json'
}

const isPostgres = (db: string) => /^postgres(ql)?:\/\//i.test(db)

const minute = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'never')

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n')
}

/**
 * `monitors keys create|list|revoke --db …`: the API keys of a server's database, for whoever
 * runs the servers (it needs the database, not a key). Every server on the database sees a
 * change at its next request. docs/security.md.
 */
export const keysCommand: Command<KeysArgs> = {
  command: 'keys <action> [id]',
  describe: "Create, list or revoke the API keys of a server's database (roles read, write, agent, admin)",
  builder: (yargs: Argv) =>
    yargs
      .positional('action', { choices: ['create', 'list', 'revoke'] as const, describe: 'create a key (shown once), list the keys, or revoke the key <id>' })
      .positional('id', { type: 'string', describe: 'revoke: the id of the key (key_…), as list shows it' })
      .option('db', {
        type: 'string',
        describe: `SQLite file or postgres:// URL of the servers (its password from PGPASSWORD or a password file, not the command line); default from MONITORING_SERVER_DB, else ${DEFAULT_DB}`,
      })
      .option('db-file', {
        type: 'string',
        requiresArg: true,
        describe: 'A file holding the --db location (a postgres:// URL with its password), instead of --db',
      })
      .option('account', { type: 'string', describe: 'create: the account of the key (required); list: only this account' })
      .option('role', { choices: KEY_ROLES, describe: 'create: read (GET only), write, agent (the agent routes only) or admin (required)' })
      .option('name', { type: 'string', describe: 'create: a name to tell the key by, e.g. github-actions' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'list: a table or JSON' })
      .example('$0 keys create --account team --role read --name pull-requests', 'a read key for plans; the key alone is the last line of stdout')
      .example('$0 keys list --db postgres://monitors@db.internal/monitors', 'every key: id, prefix, account, role, name, created, last used')
      .example('$0 keys revoke key_0123456789abcdef', 'every server refuses the key from its next request') as never,
  handler: async (args) => {
    if (args.db && args.dbFile !== undefined) throw new UserError('Give --db or --db-file, not both')
    const password = args.db ? urlPassword(args.db) : undefined
    hideSecretArguments([password])
    if (password)
      io().stderr.write(
        `${commandLineWarning('--db', 'give the URL in MONITORING_SERVER_DB or --db-file PATH, or leave the password out of it and give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass)')}\n`,
      )
    const db = (args.dbFile !== undefined ? readSecretFile(args.dbFile, '--db-file').trim() : args.db) || io().env.MONITORING_SERVER_DB || DEFAULT_DB
    if (args.action === 'create') {
      if (!args.account) throw new UserError('monitors keys create needs --account: the account the key belongs to')
      if (!args.role) throw new UserError(`monitors keys create needs --role: one of ${KEY_ROLES.join(', ')}`)
    }
    if (args.action === 'revoke' && !args.id) throw new UserError('monitors keys revoke needs the id of the key (key_…): monitors keys list shows them')
    if (args.action !== 'revoke' && args.id !== undefined) throw new UserError(`monitors keys ${args.action} takes no id (got "${args.id}")`)
    if (args.name !== undefined && (args.name.trim() === '' || args.name.length > 100)) throw new UserError('--name must be 1 to 100 characters')
    if (db === ':memory:' || db === '')
      throw new UserError('The keys of a :memory: database live only in its server: give --db the file or URL the servers use')
    if (!isPostgres(db) && !existsSync(db)) {
      throw new UserError(`No database at ${db}: give --db the file the servers use (or MONITORING_SERVER_DB); monitors server --db ${db} creates it`)
    }

    let store
    try {
      // loaded here, so the other commands start without the server
      const { openStore } = await import('../../server/index.js')
      store = await openStore(db)
    } catch (error) {
      throw nativeLoadError(error, 'server') ?? error
    }
    const { stdout, stderr } = io()
    try {
      if (args.action === 'create') {
        const { generateKey } = await import('../../server/keys.js')
        const key = generateKey()
        const record = await store.keys.create(key, { accountId: args.account as string, role: args.role as KeyRole, name: args.name?.trim() ?? null })
        stderr.write(
          `Created key ${record.id} for account ${record.accountId}, role ${record.role}${record.name ? `, name ${record.name}` : ''}, in ${shownDb(db)}. ` +
            'It is shown once (only its hash is kept); every server on the database accepts it now:\n',
        )
        stdout.write(`${key}\n`)
        return 0
      }
      if (args.action === 'revoke') {
        const revoked = await store.keys.revoke(args.id as string)
        if (!revoked) throw new UserError(`No key ${args.id} in ${shownDb(db)}: monitors keys list shows the keys`)
        stdout.write(
          `Revoked key ${revoked.id} (account ${revoked.accountId}, role ${revoked.role}${revoked.name ? `, name ${revoked.name}` : ''}): every server on the database refuses it from its next request, and its dashboard log-ins are ended.\n`,
        )
        return 0
      }
      const keys = await store.keys.list(args.account)
      if (args.format === 'json') {
        stdout.write(`${JSON.stringify(keys.map(presentKey), null, 2)}\n`)
        return 0
      }
      if (keys.length === 0) {
        stdout.write(`No keys${args.account ? ` of account ${args.account}` : ''} in ${shownDb(db)}.\n`)
        return 0
      }
      stdout.write(
        `${table([
          ['ID', 'PREFIX', 'ACCOUNT', 'ROLE', 'NAME', 'LOCATION', 'CREATED', 'LAST USED'],
          ...keys.map((k) => [k.id, k.prefix || '–', k.accountId, k.role, k.name ?? '–', k.locationId ?? '–', minute(k.created_at), minute(k.lastUsedAt)]),
        ])}\n`,
      )
      return 0
    } finally {
      await store.close()
    }
  },
}
