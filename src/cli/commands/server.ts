import type { CommandModule } from 'yargs'
import { io } from '../io.js'
import { paint } from '../color.js'
import { nativeLoadError } from '../target.js'
import { UserError } from '../../errors.js'

interface ServerArgs {
  host: string
  port: number
  db?: string
  'api-key'?: string[]
  'rate-limit'?: string
  ipv6?: string[]
  quiet: boolean
  faults?: string
  seed: number
  runner: boolean
  retention: number
  'smtp-url'?: string
  'smtp-from'?: string
  'private-targets'?: 'allow' | 'deny'
  'allow-target'?: string[]
}

/** `KEY` or `KEY:ACCOUNT`. */
export function parseApiKey(spec: string): { key: string; accountId?: string } {
  const at = spec.indexOf(':')
  const key = at === -1 ? spec : spec.slice(0, at)
  const accountId = at === -1 ? undefined : spec.slice(at + 1)
  if (!key) throw new UserError(`An API key cannot be empty (got "${spec.includes(':') ? ':' + (accountId ?? '') : spec}")`)
  if (accountId !== undefined && !accountId) throw new UserError('An account id after ":" cannot be empty')
  return accountId ? { key, accountId } : { key }
}

/** `N/W` with W in ms, s (default) or m: `600/60s`, `100/1m`, `10/500ms`. */
export function parseRateLimit(spec: string): { max: number; timeWindowMs: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*(ms|s|m)?\s*$/.exec(spec)
  if (!match) throw new UserError(`--rate-limit must look like 600/60s (requests per window; ms, s or m), got "${spec}"`)
  const max = Number(match[1])
  const unit = match[3] ?? 's'
  const timeWindowMs = Number(match[2]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000)
  if (max < 1 || timeWindowMs < 1) throw new UserError(`--rate-limit needs at least 1 request per window of at least 1 ms, got "${spec}"`)
  return { max, timeWindowMs }
}

/**
 * The database already holds keys and none were given: only their hashes are stored, so the
 * key printed at the first start cannot be shown again. Say how to get one that works.
 */
export function restartKeyHint(db: string, accountId: string): string {
  return `Keys already stored in ${db} are in use; only their hashes are kept, so the key printed at its first start cannot be shown again. ` +
    `Lost it? Restart with --api-key KEY:${accountId} (or MONITORING_SERVER_API_KEYS=KEY:${accountId}) to choose a key for account ${accountId}, or ${/^postgres(ql)?:\/\//i.test(db) ? `empty the database ${db}` : `delete ${db}`} to start empty with a new generated key.`
}

export const DEFAULT_DB = '.monitors/server.db'

/** A PostgreSQL URL with its password replaced by "***" (a SQLite path as it is): what is printed. */
export function shownDb(db: string): string {
  if (!/^postgres(ql)?:\/\//i.test(db)) return db
  try {
    const url = new URL(db)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    return db.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')
  }
}

export const serverCommand: CommandModule<object, ServerArgs> = {
  command: 'server',
  describe: 'Run the local Monitoring API (SQLite, or PostgreSQL for several servers) until Ctrl-C',
  builder: (yargs) =>
    yargs
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('port', { type: 'number', default: 4010, describe: 'Port to listen on (0 picks a free one)' })
      .option('db', {
        type: 'string',
        describe: `SQLite file (":memory:" keeps nothing), or postgres://user:pass@host:5432/db shared by several servers; default from MONITORING_SERVER_DB, else ${DEFAULT_DB}`,
      })
      .option('api-key', {
        type: 'string',
        array: true,
        describe: 'KEY[:ACCOUNT] accepted as a bearer key (repeatable); default from MONITORING_SERVER_API_KEYS',
      })
      .option('rate-limit', { type: 'string', describe: 'Requests per window and key, e.g. 600/60s (the default)' })
      .option('ipv6', { type: 'string', array: true, describe: 'Address listed by /v1/static-ipv6s.txt (repeatable)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'No log line per request' })
      .option('faults', {
        type: 'string',
        describe: 'Inject faults reproducibly, e.g. "500:0.1,429:0.05,reset:0.05,hang:0.01,latency:0-200ms"',
      })
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the fault generator (same seed, same faults)' })
      .option('runner', {
        type: 'boolean',
        default: true,
        describe: 'Run the checks in this process (--no-runner leaves every run to agents: monitors agent)',
      })
      .option('retention', { type: 'number', default: 30, describe: 'Days check results are kept; older ones are pruned' })
      .option('smtp-url', { type: 'string', describe: 'SMTP server for alert email, e.g. smtp://user:pass@mail.example.com:587; default from MONITORING_SMTP_URL' })
      .option('smtp-from', { type: 'string', describe: 'From address of alert email; default from MONITORING_SMTP_FROM, else monitors@<host name>' })
      .option('private-targets', {
        type: 'string',
        choices: ['allow', 'deny'],
        describe: 'Whether checks and alert webhooks may reach loopback, private and link-local addresses and this machine; default: deny when keys of more than one account are stored, else allow (docs/security.md)',
      })
      .option('allow-target', {
        type: 'string',
        array: true,
        describe: 'An exception to --private-targets deny: an address, a CIDR range or address:port, e.g. 10.0.0.5:8080 (repeatable)',
      }) as never,
  handler: async (args) => {
    if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) throw new UserError(`--port must be 0-65535, got ${args.port}`)
    const fromEnv = (io().env.MONITORING_SERVER_API_KEYS ?? '').split(/[\s,]+/).filter(Boolean)
    const keySpecs = args['api-key'] && args['api-key'].length > 0 ? args['api-key'] : fromEnv
    const apiKeys = keySpecs.map(parseApiKey)
    if (!Number.isFinite(args.retention) || args.retention <= 0) throw new UserError(`--retention must be a number of days above 0, got ${args.retention}`)
    const rateLimit = args['rate-limit'] !== undefined ? parseRateLimit(args['rate-limit']) : undefined
    const smtpUrl = args['smtp-url'] || io().env.MONITORING_SMTP_URL || undefined
    const smtpFrom = args['smtp-from'] || io().env.MONITORING_SMTP_FROM || undefined
    const out = (line: string) => io().stdout.write(`${line}\n`)
    const db = args.db || io().env.MONITORING_SERVER_DB || DEFAULT_DB
    let server
    try {
      // loaded here, so the other commands start without fastify and SQLite
      const { startLocalServer } = await import('../../server/index.js')
      server = await startLocalServer({
        host: args.host,
        port: args.port,
        dbPath: db,
        apiKeys,
        rateLimit,
        ipv6s: args.ipv6 && args.ipv6.length > 0 ? args.ipv6 : undefined,
        log: args.quiet ? false : out,
        faults: args.faults,
        seed: args.seed,
        scheduler: true,
        runner: args.runner,
        retentionDays: args.retention,
        alerts: { smtpUrl, smtpFrom },
        privateTargets: args['private-targets'],
        allowedTargets: args['allow-target'],
      })
    } catch (error) {
      throw nativeLoadError(error, 'server') ?? error
    }

    out(`Monitoring API listening on ${server.url} (database ${shownDb(db)}, account ${server.accountId})`)
    out(`Dashboard at ${server.url}/ (log in with one of its keys); status pages at ${server.url}/status/{url}`)
    out(args.runner
      ? `Running the activated checks (results kept ${args.retention} days); agents may serve locations too`
      : `Not running checks (--no-runner): agents claim the due runs (results kept ${args.retention} days)`)
    const targets = server.privateTargets
    out(targets.policy === 'deny'
      ? `Private targets refused: checks and alert webhooks reach public addresses only (${targets.chosen ? '--private-targets deny' : `keys of ${targets.accounts} accounts are stored; --private-targets allow to change it`})`
      : `Private targets allowed: checks and alert webhooks may reach this machine and its networks (${targets.chosen ? '--private-targets allow' : 'keys of one account; --private-targets deny to refuse them'})`)
    if (smtpUrl) {
      const smtp = new URL(smtpUrl)
      out(`Alert email through ${smtp.protocol}//${smtp.host}${smtpFrom ? ` from ${smtpFrom}` : ''}`)
    }
    if (args.faults) out(`Injecting faults: ${args.faults} (seed ${args.seed})`)
    if (server.keyGenerated && server.apiKey) {
      out(`${paint().bold('API key')} (shown once, only its hash is kept): ${server.apiKey}`)
    } else if (apiKeys.length === 0) {
      // a restart on an existing database: the key printed at the first start cannot be shown again
      out(restartKeyHint(shownDb(db), server.accountId))
    }

    await new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        out(`${signal}: finishing requests in flight, closing the database`)
        server.close().then(resolve, (error: unknown) => {
          io().stderr.write(`Error while closing: ${error instanceof Error ? error.message : String(error)}\n`)
          resolve()
        })
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
    })
  },
}
