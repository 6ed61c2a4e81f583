import { resolve } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { io } from '../io.js'
import { paint } from '../color.js'
import { nativeLoadError } from '../target.js'
import { checkNumber } from '../engine.js'
import { UserError } from '../../errors.js'
import { KEY_ROLES, MIN_KEY_LENGTH, isKeyRole, type KeyRole } from '../../server/keys.js'
import { publicUrlProblem } from '../../server/names.js'
import { isLogFormat, LOG_FORMATS, serverLogger, type ServerLogger } from '../../server/log.js'
import type { LocalServer, LocalServerOptions, ScriptsPolicy } from '../../server/index.js'
import type { UidRange } from '../../runner/script/contain.js'
import { systemClock } from '../../runner/clock.js'
import { uidRangeFromEnv, uidRangeOption } from '../uid-range.js'
import { commandLineWarning, hideSecretArguments, readSecretFile, secretOf, urlPassword } from '../secrets.js'

interface ServerArgs {
  host: string
  'public-url'?: string[]
  port: number
  db?: string
  'api-key'?: string[]
  'api-keys-file'?: string
  'db-file'?: string
  'metrics-token-file'?: string
  'smtp-url-file'?: string
  'rate-limit'?: string
  ipv6?: string[]
  quiet: boolean
  faults?: string
  seed: number
  runner: boolean
  retention: number
  'agent-alert-after': number
  'smtp-url'?: string
  'smtp-from'?: string
  'trust-proxy'?: string
  'auth-failure-limit'?: string
  'private-targets'?: 'allow' | 'deny'
  'allow-target'?: string[]
  'metrics-token'?: string
  'script-concurrency'?: number
  'playwright-suites'?: boolean
  'uncontained-scripts'?: boolean
  'script-uid-range'?: UidRange | 'off'
  'artifacts-dir'?: string
  'runtime-cache'?: string
  'log-format'?: string
  'db-pool-size'?: number
  'max-status-pages'?: number
}

/** `KEY`, `KEY:ACCOUNT` or `KEY:ACCOUNT:ROLE` (read, write, agent or admin). */
export function parseApiKey(spec: string): { key: string; accountId?: string; role?: KeyRole } {
  const at = spec.indexOf(':')
  const key = at === -1 ? spec : spec.slice(0, at)
  let accountId = at === -1 ? undefined : spec.slice(at + 1)
  let role: KeyRole | undefined
  const last = accountId?.lastIndexOf(':') ?? -1
  if (accountId !== undefined && last !== -1) {
    const named = accountId.slice(last + 1)
    if (!isKeyRole(named)) throw new UserError(`The role of an API key must be one of ${KEY_ROLES.join(', ')} (KEY:ACCOUNT:ROLE), got "${named}"`)
    role = named
    accountId = accountId.slice(0, last)
  }
  if (!key) throw new UserError(`An API key cannot be empty (got "${spec.includes(':') ? `:${spec.slice(at + 1)}` : spec}")`)
  if (accountId !== undefined && !accountId) throw new UserError('An account id after ":" cannot be empty')
  return { key, ...(accountId ? { accountId } : {}), ...(role ? { role } : {}) }
}

/** A warning for each key given shorter than MIN_KEY_LENGTH (never the key itself). */
export function shortKeyWarnings(keys: Array<{ key: string; accountId?: string }>): string[] {
  return keys
    .filter((k) => k.key.length < MIN_KEY_LENGTH)
    .map(
      (k) =>
        `Warning: an API key given${k.accountId ? ` for account ${k.accountId}` : ''} is ${k.key.length} characters long; a short key can be guessed: use at least ${MIN_KEY_LENGTH} random characters (monitors keys create makes them).`,
    )
}

/** `N/W` with W in ms, s (default) or m: `600/60s`, `100/1m`, `10/500ms`. */
export function parseRateLimit(spec: string, flag = '--rate-limit'): { max: number; timeWindowMs: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*(ms|s|m)?\s*$/.exec(spec)
  if (!match)
    throw new UserError(`${flag} must look like ${flag === '--rate-limit' ? '600/60s (requests' : '10/60s (failures'} per window; ms, s or m), got "${spec}"`)
  const max = Number(match[1])
  const unit = match[3] ?? 's'
  const timeWindowMs = Number(match[2]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000)
  if (max < 1 || timeWindowMs < 1) throw new UserError(`${flag} needs at least 1 per window of at least 1 ms, got "${spec}"`)
  return { max, timeWindowMs }
}

/**
 * The database already holds keys and none were given: only their hashes are stored, so the
 * key printed at the first start cannot be shown again. Say how to get one that works.
 */
export function restartKeyHint(db: string, accountId: string): string {
  return (
    `Keys already stored in ${db} are in use; only their hashes are kept, so the key printed at its first start cannot be shown again. ` +
    `Lost it? Make a new one with: monitors keys create --db ${db} --account ${accountId} --role admin (every server on the database accepts it at once), ` +
    `or restart with MONITORING_SERVER_API_KEYS=KEY:${accountId} (or a line KEY:${accountId} in an --api-keys-file) to add a key of your choice for account ${accountId}, or ${/^postgres(ql)?:\/\//i.test(db) ? `empty the database ${db}` : `delete ${db}`} to start empty with a new generated key.`
  )
}

export const DEFAULT_DB = '.monitors/server.db'

/** The server's log lines as --log-format (or MONITORING_SERVER_LOG_FORMAT) says: info to stdout, warnings to stderr. */
function loggerOf(flag: string | undefined): ServerLogger {
  const format = flag ?? (io().env.MONITORING_SERVER_LOG_FORMAT || 'text')
  if (!isLogFormat(format))
    throw new UserError(`${flag !== undefined ? '--log-format' : 'MONITORING_SERVER_LOG_FORMAT'} must be one of ${LOG_FORMATS.join(', ')}, got "${format}"`)
  return serverLogger(
    format,
    (text) => io().stdout.write(text),
    (text) => io().stderr.write(text),
    systemClock,
  )
}

/** MONITORING_SERVER_DB_POOL_SIZE, checked; undefined when unset. */
function poolSizeFromEnv(): number | undefined {
  const value = io().env.MONITORING_SERVER_DB_POOL_SIZE
  if (value === undefined || value === '') return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UserError(`MONITORING_SERVER_DB_POOL_SIZE must be a whole number from 1 to 1000, got "${value}"`)
  return n
}

/** `1` or `0` of an environment variable; undefined when unset (or anything else). */
function envSwitch(value: string | undefined): boolean | undefined {
  return value === '1' ? true : value === '0' ? false : undefined
}

/**
 * The start-up lines saying how scripts are held here (contained or not, and exactly what that
 * is) and which of them run: one for browser, multi-step and API checks' scripts, one for
 * Playwright check suites.
 */
export function scriptsLines(policy: ScriptsPolicy): string[] {
  const { containment: held, uidRange } = policy
  const deny = policy.privateTargets === 'deny'
  const user = uidRange
    ? `a uid of its own (uids ${uidRange.first}-${uidRange.last})`
    : held.root
      ? 'uid 0 mapped into a user namespace of its own (--script-uid-range off)'
      : "this server's uid (not root: no uid of its own)"
  const lines: string[] = []
  if (held.available) {
    lines.push(
      `Scripts run contained by bubblewrap ${held.version ?? ''}`.trimEnd() +
        ": each run of a browser, multi-step or Playwright check and each API check's setup and teardown scripts in a sandbox of its own: " +
        `${user}, its own PID, mount, network, IPC and UTS namespaces, no new user namespaces, a read-only view of the system without the server's files or other runs', ` +
        `its own /tmp and /dev/shm (memory of a fixed size), a network whose one way out is the egress proxy (private targets ${deny ? 'refused' : 'allowed'}), processes and file sizes bounded by rlimits (docs/scripts.md)`,
    )
  } else {
    const walls =
      "held only by Node's permission model and the network guard in their process: they share this machine's network, processes and temporary folders"
    lines.push(
      `Scripts are not contained here (${held.problem}): ${
        policy.scripts
          ? `browser, multi-step and API checks' scripts run ${walls}${deny ? ' (--uncontained-scripts)' : ''}`
          : `under --private-targets deny, browser, multi-step and API checks' scripts are not run (their runs fail with hasErrors; --uncontained-scripts runs them, ${walls}): agents run them`
      }`,
    )
  }
  lines.push(suitesLine(policy))
  return lines
}

/** What a server that runs checks says of its scripts at start: its runtimes, how it holds scripts, a runtime cache its runs cannot read. */
async function runnerLines(runtimeCache: string | undefined, policy: ScriptsPolicy): Promise<string[]> {
  const { defaultRuntimeCache, runtimesSummary } = await import('../../runner/script/runtimes.js')
  const cache = runtimeCache ? resolve(runtimeCache) : defaultRuntimeCache()
  const lines = [runtimesSummary(cache), ...scriptsLines(policy)]
  // runs as users of their own read the runtimes as any other user does
  const { closedToOthers } = await import('../../runner/script/contain.js')
  const closed = policy.uidRange && (policy.containment.available || policy.suites) ? closedToOthers(cache) : null
  if (closed)
    lines.push(
      `Note: the runs' own users cannot read the runtime cache ${cache}: ${closed.path} is closed to other users (mode ${closed.mode}), so their runs fail saying so; prepare the runtimes in a folder other users can read (--runtime-cache or MONITORS_RUNTIME_CACHE, e.g. /var/cache/monitors/runtimes)`,
    )
  return lines
}

/** The start-up line saying whether Playwright check suites run here and how they are contained. */
function suitesLine(policy: ScriptsPolicy): string {
  const { containment: held, uidRange } = policy
  if (policy.suites && held.available) return "Playwright check suites run contained as the other scripts, their browsers and workers in the run's sandbox"
  if (policy.suites && uidRange)
    return `Playwright check suites run each as a user of its own (uids ${uidRange.first}-${uidRange.last}): held to their run's files, not to the private-target policy (not contained)`
  if (policy.suites)
    return `Playwright check suites run as this server's user (${policy.suitesChosen ? '--playwright-suites' : '--uncontained-scripts'}; not contained, not root): a suite can read what this user can, and reach what this machine reaches (docs/scripts.md)`
  const why = policy.suitesChosen
    ? '--no-playwright-suites'
    : uidRange
      ? 'not contained, and under --private-targets deny a user of its own does not hold a suite to the policy; --playwright-suites runs them anyway'
      : 'not contained, and not root, so no user of their own for their runs; --playwright-suites runs them anyway'
  return `Playwright check suites are not run here (${why}): agents run them`
}

/**
 * On a server several accounts share, a status page's customDomain is a claim on the whole
 * server: without --public-url the server does not know the names it is reached under, so an
 * account could take one of them and be served there in place of the dashboard. Said at start.
 */
export function sharedNamesWarning(accounts: number, publicUrls: readonly string[]): string | undefined {
  if (accounts < 2 || publicUrls.length > 0) return undefined
  return (
    `Warning: keys of ${accounts} accounts are stored and no --public-url is given: this server knows only its own host names, so a status page of any account may take another name the server is reached under (behind a balancer, a proxy or DNS) as its customDomain and be served there in place of the dashboard. ` +
    'Give every URL the server is reached under with --public-url (or MONITORING_SERVER_PUBLIC_URL) (docs/server.md, "Status pages on a shared server")'
  )
}

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

/** Entries of MONITORING_SERVER_API_KEYS or of an --api-keys-file: separated by line breaks, commas or spaces; `#` starts a comment. */
export function keySpecsOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join(' ')
    .split(/[\s,]+/)
    .filter(Boolean)
}

/**
 * The server's secrets from their flags, files and environment variables, with a warning for each
 * given on the command line (the process's title is rewritten without them at once).
 */
export function serverSecrets(args: ServerArgs) {
  const env = io().env
  const warnings: string[] = []
  const flagKeys = args['api-key'] ?? []
  if (flagKeys.length > 0 && args['api-keys-file'] !== undefined) throw new UserError('Give --api-key or --api-keys-file, not both')
  if (flagKeys.length > 0) warnings.push(commandLineWarning('--api-key', 'give the keys in MONITORING_SERVER_API_KEYS or --api-keys-file PATH'))
  const keySpecs =
    flagKeys.length > 0
      ? flagKeys
      : keySpecsOf(args['api-keys-file'] !== undefined ? readSecretFile(args['api-keys-file'], '--api-keys-file') : (env.MONITORING_SERVER_API_KEYS ?? ''))
  const apiKeys = keySpecs.map(parseApiKey)
  const metricsToken = secretOf(
    { flag: '--metrics-token', fileFlag: '--metrics-token-file', env: 'MONITORING_SERVER_METRICS_TOKEN' },
    { flag: args['metrics-token'], file: args['metrics-token-file'], env: env.MONITORING_SERVER_METRICS_TOKEN },
    warnings,
  )
  if (args.db && args['db-file'] !== undefined) throw new UserError('Give --db or --db-file, not both')
  const db = (args['db-file'] !== undefined ? readSecretFile(args['db-file'], '--db-file').trim() : args.db) || env.MONITORING_SERVER_DB || DEFAULT_DB
  const dbPassword = args.db ? urlPassword(args.db) : undefined
  if (dbPassword)
    warnings.push(
      commandLineWarning(
        '--db',
        'give the URL in MONITORING_SERVER_DB or --db-file PATH, or leave the password out of it and give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass)',
      ),
    )
  if (args['smtp-url'] && args['smtp-url-file'] !== undefined) throw new UserError('Give --smtp-url or --smtp-url-file, not both')
  const smtpUrl =
    (args['smtp-url-file'] !== undefined ? readSecretFile(args['smtp-url-file'], '--smtp-url-file').trim() : args['smtp-url']) ||
    env.MONITORING_SMTP_URL ||
    undefined
  const smtpPassword = args['smtp-url'] ? urlPassword(args['smtp-url']) : undefined
  if (smtpPassword) warnings.push(commandLineWarning('--smtp-url', 'give the URL in MONITORING_SMTP_URL or --smtp-url-file PATH'))
  hideSecretArguments([...flagKeys.map((spec) => parseApiKey(spec).key), args['metrics-token'], dbPassword, smtpPassword])
  return { apiKeys, metricsToken, db, smtpUrl, warnings }
}

/** Where the server listens, its database, keys, limits and faults. */
function serviceOptions(yargs: Argv): Argv {
  return yargs
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
    .option('port', {
      type: 'number',
      default: 4010,
      requiresArg: true,
      coerce: checkNumber('--port', 'a port number from 0 to 65535, or 0 for a free one', (n) => Number.isInteger(n) && n >= 0 && n <= 65535),
      describe: 'Port to listen on (0 picks a free one)',
    })
    .option('public-url', {
      type: 'string',
      array: true,
      describe:
        "A URL the server is reached under, e.g. https://monitors.example.com behind a balancer (repeatable): its host name is the server's own, never a status page's customDomain; default from MONITORING_SERVER_PUBLIC_URL",
    })
    .option('db', {
      type: 'string',
      describe: `SQLite file (":memory:" keeps nothing), or postgres://user@host:5432/db shared by several servers (its password from PGPASSWORD or a password file, PGPASSFILE or ~/.pgpass; a password in the URL here gets a warning); default from MONITORING_SERVER_DB, else ${DEFAULT_DB}`,
    })
    .option('db-file', {
      type: 'string',
      requiresArg: true,
      describe: 'A file holding the --db location (a postgres:// URL with its password), instead of --db',
    })
    .option('api-key', {
      type: 'string',
      array: true,
      describe:
        'KEY[:ACCOUNT[:ROLE]] added to the accepted keys (repeatable; role admin unless given; never revokes another key). On the command line a key can be read by every user of the machine (a warning says so): prefer MONITORING_SERVER_API_KEYS or --api-keys-file',
    })
    .option('api-keys-file', {
      type: 'string',
      requiresArg: true,
      describe: 'A file of KEY[:ACCOUNT[:ROLE]] entries, one a line (or separated by commas or spaces; # starts a comment), instead of --api-key',
    })
    .option('rate-limit', { type: 'string', describe: 'Requests per window and key, e.g. 600/60s (the default)' })
    .option('auth-failure-limit', { type: 'string', describe: 'Failed authentications per client address and window before 429, e.g. 10/60s (the default)' })
    .option('trust-proxy', {
      type: 'string',
      describe:
        'Balancers trusted to name the client (X-Forwarded-For): addresses or subnets, comma-separated (10.0.0.5,10.0.1.0/24, loopback), or their number; default from MONITORING_SERVER_TRUST_PROXY, else none',
    })
    .option('ipv6', { type: 'string', array: true, describe: 'Address listed by /v1/static-ipv6s.txt (repeatable)' })
    .option('quiet', { type: 'boolean', default: false, describe: 'No log line per request' })
    .option('faults', {
      type: 'string',
      describe: 'Inject faults reproducibly, e.g. "500:0.1,429:0.05,reset:0.05,hang:0.01,latency:0-200ms"',
    })
    .option('seed', {
      type: 'number',
      default: 1,
      requiresArg: true,
      coerce: checkNumber('--seed', 'a whole number', Number.isSafeInteger),
      describe: 'Seed of the fault generator (same seed, same faults)',
    })
    .option('runner', {
      type: 'boolean',
      default: true,
      describe: 'Run the checks in this process (--no-runner leaves every run to agents: monitors agent)',
    })
    .option('retention', {
      type: 'number',
      default: 30,
      requiresArg: true,
      coerce: checkNumber('--retention', 'a number of days above 0', (n) => n > 0),
      describe: 'Days check results are kept; older ones are pruned',
    })
    .option('agent-alert-after', {
      type: 'number',
      default: 5,
      requiresArg: true,
      coerce: checkNumber('--agent-alert-after', 'a number of minutes above 0', (n) => n > 0),
      describe: "Minutes a private location may have no live agent before its alert goes to the account's alert channels",
    })
}

/** Alert email, the target policy and the metrics token. */
function alertOptions(yargs: Argv): Argv {
  return yargs
    .option('smtp-url', {
      type: 'string',
      describe:
        'SMTP server for alert email, e.g. smtp://user:pass@mail.example.com:587 (a password here gets a warning: prefer MONITORING_SMTP_URL or --smtp-url-file); default from MONITORING_SMTP_URL',
    })
    .option('smtp-url-file', { type: 'string', requiresArg: true, describe: 'A file holding the --smtp-url (with its password), instead of --smtp-url' })
    .option('smtp-from', { type: 'string', describe: 'From address of alert email; default from MONITORING_SMTP_FROM, else monitors@<host name>' })
    .option('private-targets', {
      type: 'string',
      choices: ['allow', 'deny'],
      describe:
        'Whether checks and alert webhooks may reach loopback, private and link-local addresses and this machine; default: deny when keys of more than one account are stored, else allow (docs/security.md)',
    })
    .option('allow-target', {
      type: 'string',
      array: true,
      describe: 'An exception to --private-targets deny: an address, a CIDR range or address:port, e.g. 10.0.0.5:8080 (repeatable)',
    })
    .option('metrics-token', {
      type: 'string',
      describe:
        "Bearer token of GET /metrics for the operator: server metrics and every account's checks (at least 16 characters). On the command line it can be read by every user of the machine (a warning says so): prefer MONITORING_SERVER_METRICS_TOKEN or --metrics-token-file",
    })
    .option('metrics-token-file', { type: 'string', requiresArg: true, describe: 'A file holding the metrics token, instead of --metrics-token' })
}

/** Script runs, their folders, the pool and the log. */
function scriptOptions(yargs: Argv): Argv {
  return yargs
    .option('script-concurrency', {
      type: 'number',
      requiresArg: true,
      coerce: checkNumber('--script-concurrency', 'a whole number from 1', (n) => Number.isInteger(n) && n >= 1),
      describe:
        'Browser, multi-step and Playwright suite runs at a time; the others wait, so other check types keep their schedule (default: one per two cores, at least 1)',
    })
    .option('playwright-suites', {
      type: 'boolean',
      describe:
        "Run Playwright check suites on this server's runner. Default: yes where each run is contained (bubblewrap: a sandbox of its own), or, not contained, when the server is root (each run a user of its own, --script-uid-range, held to its files) under --private-targets allow; else no (their runs fail with hasErrors and agents run them). --playwright-suites runs them there too, where a suite is held to neither its files nor the policy; --no-playwright-suites never (default from MONITORING_SERVER_PLAYWRIGHT_SUITES=1 or 0; docs/scripts.md)",
    })
    .option('uncontained-scripts', {
      type: 'boolean',
      describe:
        'Under --private-targets deny, run the scripts of browser, multi-step and API checks (and Playwright suites) on a machine that cannot contain them (no bubblewrap, or a kernel that refuses it the namespaces), held only by the walls in their own process (default from MONITORING_SERVER_UNCONTAINED_SCRIPTS=1; without it their runs fail with hasErrors; docs/scripts.md)',
    })
    .option('script-uid-range', {
      type: 'string',
      requiresArg: true,
      coerce: uidRangeOption('--script-uid-range'),
      describe:
        "Uids (and gids) given to script runs (browser, multi-step, suites, API checks' scripts) when the server is root, one per run at a time, e.g. 200000-200999 (the default); accounts of /etc/passwd are skipped; off runs them as root (default from MONITORS_SCRIPT_UID_RANGE)",
    })
    .option('max-status-pages', {
      type: 'number',
      requiresArg: true,
      coerce: checkNumber('--max-status-pages', 'a whole number from 1', (n) => Number.isInteger(n) && n >= 1),
      describe: 'Status pages one account may have (default 100); a create past it answers 409',
    })
    .option('artifacts-dir', {
      type: 'string',
      requiresArg: true,
      describe:
        'Folder of the screenshots, traces and logs of browser and multi-step runs (default: <database file>.artifacts; with PostgreSQL, give a folder every server shares)',
    })
    .option('runtime-cache', {
      type: 'string',
      requiresArg: true,
      describe: 'Folder of the prepared script runtimes (default $MONITORS_RUNTIME_CACHE, else ~/.cache/monitors/runtimes)',
    })
    .option('db-pool-size', {
      type: 'number',
      requiresArg: true,
      coerce: checkNumber('--db-pool-size', 'a whole number from 1 to 1000', (n) => Number.isInteger(n) && n >= 1 && n <= 1000),
      describe:
        "PostgreSQL: connections of the server's pool (default from MONITORING_SERVER_DB_POOL_SIZE, else 10); key look-ups and the rate limit have 3 more of their own, lease extensions and readiness 2",
    })
    .option('log-format', {
      type: 'string',
      requiresArg: true,
      describe:
        'text: each line begins with its ISO time (the default); json: one JSON object a line, {time, level, msg} (default from MONITORING_SERVER_LOG_FORMAT)',
    })
}

type ServerSecrets = ReturnType<typeof serverSecrets>
type StartOptions = LocalServerOptions & { publicUrls: string[]; alerts: { smtpUrl?: string; smtpFrom?: string } }

/** startLocalServer's settings from the flags, the environment and the secrets read. */
function startOptions(args: ServerArgs, { apiKeys, metricsToken, db, smtpUrl }: ServerSecrets, logger: ServerLogger): StartOptions {
  const out = logger.info
  const authFailureLimit = args['auth-failure-limit'] !== undefined ? parseRateLimit(args['auth-failure-limit'], '--auth-failure-limit') : undefined
  const trustSpec = args['trust-proxy'] ?? io().env.MONITORING_SERVER_TRUST_PROXY
  const trustProxy = trustSpec === undefined || trustSpec === '' ? undefined : /^\s*\d+\s*$/.test(trustSpec) ? Number(trustSpec) : trustSpec
  const rateLimit = args['rate-limit'] !== undefined ? parseRateLimit(args['rate-limit']) : undefined
  const smtpFrom = args['smtp-from'] || io().env.MONITORING_SMTP_FROM || undefined
  const fromFlag = args['public-url'] !== undefined && args['public-url'].length > 0
  const publicUrls = fromFlag ? (args['public-url'] as string[]) : (io().env.MONITORING_SERVER_PUBLIC_URL ?? '').split(/[\s,]+/).filter(Boolean)
  for (const url of publicUrls) {
    const problem = publicUrlProblem(url)
    if (problem) throw new UserError(`${fromFlag ? '--public-url' : 'MONITORING_SERVER_PUBLIC_URL'} ${problem}`)
  }
  return {
    host: args.host,
    publicUrls,
    port: args.port,
    dbPath: db,
    dbPoolSize: args['db-pool-size'] ?? poolSizeFromEnv(),
    apiKeys,
    rateLimit,
    authFailureLimit,
    trustProxy,
    ipv6s: args.ipv6 && args.ipv6.length > 0 ? args.ipv6 : undefined,
    log: args.quiet ? false : out,
    warn: logger.warn,
    faults: args.faults,
    seed: args.seed,
    scheduler: true,
    runner: args.runner,
    retentionDays: args.retention,
    noAgentAlertMinutes: args['agent-alert-after'],
    alerts: { smtpUrl, smtpFrom },
    privateTargets: args['private-targets'],
    allowedTargets: args['allow-target'],
    metricsToken,
    scriptConcurrency: args['script-concurrency'],
    playwrightSuites: args['playwright-suites'] ?? envSwitch(io().env.MONITORING_SERVER_PLAYWRIGHT_SUITES),
    uncontainedScripts: args['uncontained-scripts'] ?? envSwitch(io().env.MONITORING_SERVER_UNCONTAINED_SCRIPTS),
    scriptUidRange: args['script-uid-range'] ?? uidRangeFromEnv(),
    artifactsDir: args['artifacts-dir'] || io().env.MONITORING_SERVER_ARTIFACTS_DIR || undefined,
    runtimeCache: args['runtime-cache'],
    limits: { statusPagesPerAccount: args['max-status-pages'] },
  }
}

/** The lines a started server prints: where it listens, what it runs, what it refuses. */
async function printStart(
  server: LocalServer,
  args: ServerArgs,
  options: StartOptions,
  { apiKeys, metricsToken, db, smtpUrl }: ServerSecrets,
  logger: ServerLogger,
): Promise<void> {
  const out = logger.info
  const { publicUrls, trustProxy } = options
  const smtpFrom = options.alerts.smtpFrom
  out(`Monitoring API listening on ${server.url} (database ${shownDb(db)}, account ${server.accountId})`)
  out(`Dashboard at ${server.url}/ (log in with one of its keys); status pages at ${server.url}/status/{url}`)
  out(
    args.runner
      ? `Running the activated checks (results kept ${args.retention} days); agents may serve locations too`
      : `Not running checks (--no-runner): agents claim the due runs (results kept ${args.retention} days)`,
  )
  if (args.runner) for (const line of await runnerLines(args['runtime-cache'], server.scripts)) out(line)
  const targets = server.privateTargets
  out(
    targets.policy === 'deny'
      ? `Private targets refused: checks and alert webhooks reach public addresses only (${targets.chosen ? '--private-targets deny' : `keys of ${targets.accounts} accounts are stored; --private-targets allow to change it`})`
      : `Private targets allowed: checks and alert webhooks may reach this machine and its networks (${targets.chosen ? '--private-targets allow' : 'keys of one account; --private-targets deny to refuse them'})`,
  )
  const shared = sharedNamesWarning(targets.accounts, publicUrls)
  if (shared) logger.warn(shared)
  if (smtpUrl) {
    const smtp = new URL(smtpUrl)
    out(`Alert email through ${smtp.protocol}//${smtp.host}${smtpFrom ? ` from ${smtpFrom}` : ''}`)
  }
  out(
    `Prometheus metrics at ${server.url}/metrics (${metricsToken ? 'the metrics token: every account; a key of an account: its checks' : "a key of an account: its checks; --metrics-token for the server's own metrics"})`,
  )
  if (args.faults) out(`Injecting faults: ${args.faults} (seed ${args.seed})`)
  for (const warning of shortKeyWarnings(apiKeys)) logger.warn(warning)
  if (trustProxy !== undefined) out(`Trusting X-Forwarded-For from ${String(trustProxy)}`)
  if (server.keyGenerated && server.apiKey) {
    out(`${paint().bold('API key')} (shown once, only its hash is kept): ${server.apiKey}`)
  } else if (apiKeys.length === 0) {
    // a restart on an existing database: the key printed at the first start cannot be shown again
    out(restartKeyHint(shownDb(db), server.accountId))
  }
}

/** Until SIGINT or SIGTERM: then requests in flight finish and the database closes. */
function untilSignal(server: LocalServer, logger: ServerLogger): Promise<void> {
  const out = logger.info
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      out(`${signal}: finishing requests in flight, closing the database`)
      server.close().then(resolve, (error: unknown) => {
        logger.warn(`Error while closing: ${error instanceof Error ? error.message : String(error)}`)
        resolve()
      })
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}

export const serverCommand: CommandModule<object, ServerArgs> = {
  command: 'server',
  describe: 'Run the local Monitoring API (SQLite, or PostgreSQL for several servers) until Ctrl-C',
  builder: (yargs) => scriptOptions(alertOptions(serviceOptions(yargs))) as never,
  handler: async (args) => {
    const logger = loggerOf(args['log-format'])
    const secrets = serverSecrets(args)
    for (const warning of secrets.warnings) logger.warn(warning)
    const options = startOptions(args, secrets, logger)
    let server
    try {
      // loaded here, so the other commands start without fastify and SQLite
      const { startLocalServer } = await import('../../server/index.js')
      server = await startLocalServer(options)
    } catch (error) {
      throw nativeLoadError(error, 'server') ?? error
    }
    await printStart(server, args, options, secrets, logger)
    await untilSignal(server, logger)
  },
}
