import { SubscriberMailer, type SubscriberMailOptions } from './alerts/subscribers.js'
import { isIP, type AddressInfo } from 'node:net'
import { buildApp } from './app.js'
import type { SkipCount, Store } from './store/index.js'
import { parseFaults, type FaultCounts, type FaultSpec } from './faults.js'
import { DEFAULT_RETENTION_DAYS, Scheduler, type FinalResultHook, type RunServices, type SchedulerOptions } from './scheduler/index.js'
import type { RunResult } from '../runner/types.js'
import { recordResult, type RecordableCheck } from './results/index.js'
import { UserError } from '../errors.js'
import type { KeyRole } from './keys.js'
import { AlertDeliveryWorker, type AlertDeliveryOptions } from './alerts/worker.js'
import { DEFAULT_NO_AGENT_ALERT_MINUTES, sweepPrivateLocations, type LocationAlert } from './alerts/private-locations.js'
import { publicUrlProblem, serverNames } from './names.js'
import { parseAllowedTarget, type PrivateTargets } from '../runner/targets.js'
import { ServerMetrics } from './metrics.js'
import { defaultScriptConcurrency, Semaphore } from '../runner/script-probe.js'
import { ArtifactStore } from './artifacts.js'
import { effectiveUidRange, type UidRange } from '../runner/script/contain.js'
import { containment, type Containment } from '../runner/script/jail.js'
import { serverLimits, type ServerLimits } from './limits.js'
import { systemClock, type Clock } from '../runner/clock.js'

export { parseFaults, type FaultCounts, type FaultSpec } from './faults.js'
export { checkSmtpUrl, type AlertDeliveryOptions } from './alerts/worker.js'

export interface LocalServerOptions {
  /** default '127.0.0.1' */
  host?: string
  /**
   * URLs the server is reached under besides its address (behind a balancer or a proxy, e.g.
   * https://monitors.example.com): their host names are the server's own, so no status page may
   * take one as its customDomain, and the dashboard is always served there (see names.ts)
   */
  publicUrls?: string[]
  /** default 0 (a free port); the CLI command defaults to 4010 */
  port?: number
  /**
   * default ':memory:'; a file path creates its parent directories; a postgres:// (or
   * postgresql://) URL uses that PostgreSQL database, which several servers may share
   */
  dbPath?: string
  /** PostgreSQL: connections of the server's main pool (default 10; see docs/team.md) */
  dbPoolSize?: number
  /** PostgreSQL: how long a statement waits for a free connection before answering 503 (ms, default 10,000) */
  dbPoolWaitMs?: number
  /**
   * registered (hashed) on start, added to the keys already stored (none is revoked); an account
   * id defaults to 'acc_' and a short hash of the key, a role to admin (a key already stored
   * keeps what is not given)
   */
  apiKeys?: Array<{ key: string; accountId?: string; role?: KeyRole }>
  /** default 600 per 60000 ms, per key */
  rateLimit?: { max: number; timeWindowMs: number }
  /** failed authentications per client address and window before it gets 429 (default 10 per 60000 ms) */
  authFailureLimit?: { max: number; timeWindowMs: number }
  /**
   * the balancers trusted to name the client (X-Forwarded-For, -Proto, -Host): addresses or
   * subnets (a comma-separated string or a list; `loopback`, `linklocal`, `uniquelocal` too), or
   * the number of balancers in front; default none
   */
  trustProxy?: string | string[] | number
  /** served by /v1/static-ipv6s.txt instead of this machine's global addresses */
  ipv6s?: string[]
  /** one line per request (method, url, status, ms); default false */
  log?: boolean | ((line: string) => void)
  /**
   * where the server tells its problems (internal errors, the database away or its pool
   * saturated, the scheduler's and the alert sender's troubles); default: `log` when it is a
   * function for internal errors, else stderr
   */
  warn?: (line: string) => void
  /** inject faults reproducibly: a spec such as "500:0.1,reset:0.05,latency:0-200ms" (see faults.ts) */
  faults?: string | FaultSpec
  /** seed of the fault generator; default 1 */
  seed?: number
  /**
   * Plan due runs of the activated checks, prune old results (default false: the embedded
   * server of plan/apply lives for one command and must not run checks; `monitors server` turns it on)
   */
  scheduler?: boolean
  /** run due runs in this process (default false; turns `scheduler` on unless it is false); off, agents run them */
  runner?: boolean
  /** days results are kept (default 30) */
  retentionDays?: number
  /** minutes a private location may have no live agent before its alert goes to the account's alert channels (default 5; docs/agents.md) */
  noAgentAlertMinutes?: number
  /** the server's clock: of schedules, leases, results, deliveries, sessions, rate limits (default the system's; tests drive their own) */
  clock?: () => number
  /** scheduler tuning: tick, concurrency, lease, run options (tests) */
  schedulerOptions?: Partial<Omit<SchedulerOptions, 'store' | 'services' | 'plan' | 'run' | 'retentionMs'>>
  /** called with every FINAL result, in the transaction that records it */
  onFinalResult?: FinalResultHook
  /**
   * Send the alert notifications' deliveries (webhook, Slack, email) from this process, with
   * these settings (SMTP URL, retries); false: never. Default: on when the scheduler is.
   */
  alerts?: AlertDeliveryOptions | false
  /** the sender of status pages' subscriber emails (on with `alerts` and its SMTP URL): tuning for tests */
  subscriberMail?: Partial<Omit<SubscriberMailOptions, 'smtpUrl' | 'clock'>>
  /**
   * The private-target policy of this server's own runner and alert deliveries (docs/security.md):
   * `deny` refuses loopback, private, link-local and this machine's own addresses. Default:
   * `deny` when the store holds keys of more than one account at start, else `allow`.
   */
  privateTargets?: PrivateTargets
  /** exceptions to `deny`: an address, a CIDR range or an address:port each (e.g. 10.0.0.5:8080) */
  allowedTargets?: string[]
  /**
   * The operator's token of GET /metrics: with it, the server's own metrics and every account's
   * checks; without it, an account's key sees its own checks only (docs/metrics.md)
   */
  metricsToken?: string
  /**
   * Browser, multi-step and Playwright suite runs at a time on this server's runner (default: one per two cores,
   * at least 1); the others wait for a place, so the other check types keep their schedule.
   */
  scriptConcurrency?: number
  /**
   * Whether this server's runner runs Playwright check suites. Default: yes when each run is
   * contained (jail.ts: this machine gives runs their own namespaces), or, where it is not, when
   * each run can be given a user of its own (the server runs as root, `scriptUidRange` is not
   * 'off') and the private-target policy is `allow`; else no (their runs fail with hasErrors
   * saying so). `true` runs them there too, where `playwright test` is held to neither its files
   * nor the policy (docs/scripts.md); `false` never runs them.
   */
  playwrightSuites?: boolean
  /**
   * Run browser, multi-step and API checks' scripts (and suites) under the private-target policy
   * `deny` on a machine that cannot contain them (no bubblewrap, a kernel that refuses the
   * namespaces), held by the in-process walls alone (default false: their runs fail with
   * hasErrors saying so, and agents run them).
   */
  uncontainedScripts?: boolean
  /** The uids suite runs are given when the server is root (default $MONITORS_SCRIPT_UID_RANGE, else 200000-200999; 'off': none). */
  scriptUidRange?: UidRange | 'off'
  /** Where the runtimes of scripts are prepared (default $MONITORS_RUNTIME_CACHE, else ~/.cache/monitors/runtimes). */
  runtimeCache?: string
  /** Chromium of browser checks (default /usr/bin/chromium, or $CHROMIUM_PATH). */
  chromiumPath?: string
  /**
   * Where the artifacts of browser and multi-step runs are kept (src/server/artifacts.ts);
   * default `<SQLite file>.artifacts` beside the database, else a temporary folder removed at close.
   */
  artifactsDir?: string
  /**
   * What one account or client may make the server hold or send (limits.ts): status pages per
   * account (default 100), subscription confirmations per email address (5 an hour) and
   * subscriptions per client address (20 an hour), bytes of agents' artifacts staged per account (1 GB)
   */
  limits?: Partial<ServerLimits>
}

export interface LocalServer {
  /** e.g. http://127.0.0.1:40123 (no trailing slash) */
  url: string
  /** the first key of options.apiKeys, or the key generated on first start; undefined when keys already existed and none were given */
  apiKey?: string
  /** true when apiKey was generated by this start (it is shown once, never again) */
  keyGenerated: boolean
  /** account of apiKey (or of the first account) */
  accountId: string
  /** the private-target policy in force, and the number of accounts holding keys it was decided from */
  privateTargets: { policy: PrivateTargets; accounts: number; chosen: boolean }
  /** how this server's runner holds scripts (contained or not), and which of them it runs */
  scripts: ScriptsPolicy
  /** HTTP requests received since start */
  requestCount(): number
  /** faults injected so far, when faults are on */
  faultCounts(): FaultCounts | undefined
  /** runs completed by this server's runner */
  completedRuns(): number
  /** graceful: in-flight requests finish, then the database closes */
  close(): Promise<void>
}

export const DEFAULT_RATE_LIMIT = { max: 600, timeWindowMs: 60_000 } as const

/** True for a postgres:// or postgresql:// URL (the PostgreSQL store), false for a SQLite path. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

/** The store at `location`: a PostgreSQL URL, or a SQLite file (':memory:' keeps nothing). */
export async function openStore(location: string, options: { poolSize?: number; poolWaitMs?: number; clock?: Clock } = {}): Promise<Store> {
  // each store's driver is loaded only for its own kind of database: a server on PostgreSQL runs
  // without better-sqlite3 (an optional dependency, whose native build may be missing), and an
  // embedded server never loads pg
  if (!isPostgresUrl(location)) {
    const { openSqliteStore } = await import('./store/sqlite/index.js')
    return openSqliteStore(location, options.clock)
  }
  const { openPostgresStore } = await import('./store/postgres/index.js')
  return openPostgresStore(location, options)
}

/**
 * A trusted-proxy setting as fastify takes it, or a UserError naming what is wrong: a hop count
 * (a whole number from 1), or addresses and subnets (IPv4, IPv6, CIDR, or proxy-addr's names).
 */
export function checkTrustProxy(value: string | string[] | number): string | string[] | number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 1) throw new UserError(`The trusted proxy count must be a whole number from 1, got ${value}`)
    return value
  }
  const entries = (Array.isArray(value) ? value : value.split(',')).map((e) => e.trim()).filter(Boolean)
  if (entries.length === 0)
    throw new UserError('The trusted proxies cannot be empty: give addresses or subnets (10.0.0.5,10.0.1.0/24), loopback, or a number of balancers')
  const named = new Set(['loopback', 'linklocal', 'uniquelocal'])
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/')
    const family = isIP(address)
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))
    if (!named.has(entry) && (family === 0 || !bitsOk || rest.length > 0)) {
      throw new UserError(`"${entry}" is not an address, a subnet or one of loopback, linklocal, uniquelocal (trusted proxies: e.g. 10.0.0.5,10.0.1.0/24)`)
    }
  }
  return entries
}

/** The options of a server start, checked (each bad one a UserError naming it), with their defaults. */
function serverSettings(options: LocalServerOptions) {
  const allowedTargets = options.allowedTargets ?? []
  for (const entry of allowedTargets) {
    try {
      parseAllowedTarget(entry)
    } catch (error) {
      throw new UserError(`--allow-target ${(error as Error).message}`)
    }
  }
  const log = options.log === true ? (line: string) => process.stderr.write(`${line}\n`) : options.log || undefined
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT
  if (!(rateLimit.max >= 1) || !(rateLimit.timeWindowMs >= 1)) {
    throw new UserError('The rate limit needs at least 1 request per window of at least 1 ms')
  }
  const authFailureLimit = options.authFailureLimit
  if (authFailureLimit && (!(authFailureLimit.max >= 1) || !(authFailureLimit.timeWindowMs >= 1))) {
    throw new UserError('The failed-authentication limit needs at least 1 failure per window of at least 1 ms')
  }
  const trustProxy = options.trustProxy === undefined ? undefined : checkTrustProxy(options.trustProxy)
  const faults =
    options.faults === undefined
      ? undefined
      : { spec: typeof options.faults === 'string' ? parseFaults(options.faults) : options.faults, seed: options.seed ?? 1 }
  const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS
  if (!(retentionDays > 0)) throw new UserError(`The retention must be more than 0 days, got ${retentionDays}`)
  const noAgent = options.noAgentAlertMinutes ?? DEFAULT_NO_AGENT_ALERT_MINUTES
  if (!(noAgent > 0)) throw new UserError(`The no-agent alert must wait more than 0 minutes, got ${noAgent}`)
  const scriptConcurrency = options.scriptConcurrency ?? defaultScriptConcurrency()
  if (!Number.isInteger(scriptConcurrency) || scriptConcurrency < 1)
    throw new UserError(`The script concurrency must be a whole number from 1, got ${scriptConcurrency}`)
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`))
  return { allowedTargets, log, warn, rateLimit, authFailureLimit, trustProxy, faults, retentionMs: retentionDays * 86_400_000, scriptConcurrency }
}

/** Every FINAL result feeds the check's status, error groups and alert state, then the caller's hook. */
function finalResultHook(options: LocalServerOptions, alerts: AlertDeliveryWorker | undefined, clock: Clock): FinalResultHook {
  return async (tx, check, result, recorded) => {
    // the store gave the result its id in this transaction: nothing to remember it by
    // (the check as parsed once by completeRun)
    const outcome = await recordResult(
      tx,
      check as unknown as RecordableCheck,
      { ...result, id: recorded.final.id },
      { fresh: true, account: recorded.run.account, now: clock.now() },
    )
    // the deliveries are written with this transaction: the worker's next claim waits for its commit
    if (outcome.notifications.length > 0) alerts?.wake()
    await options.onFinalResult?.(tx, check, result, recorded)
  }
}

/** The artifact folder of a server: given, beside a SQLite file, or temporary. */
function artifactStoreFor(options: LocalServerOptions): ArtifactStore {
  if (options.artifactsDir) return new ArtifactStore(options.artifactsDir)
  const db = options.dbPath ?? ':memory:'
  if (db !== ':memory:' && !isPostgresUrl(db)) return new ArtifactStore(`${db}.artifacts`)
  return ArtifactStore.temporary()
}

/** Listens on host:port and answers the URL it is reached at; an address it cannot take is a UserError. */
async function listen(app: Awaited<ReturnType<typeof buildApp>>, host: string, port: number): Promise<string> {
  try {
    await app.listen({ host, port })
  } catch (error) {
    await app.close().catch(() => undefined)
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new UserError(`Cannot listen on ${host}:${port}: ${code}`)
    }
    throw error
  }
  const address = app.server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${shownHost}:${address.port}`
}

/**
 * How the runner holds the scripts it runs (browser and multi-step checks, Playwright check
 * suites, API checks' setup and teardown scripts) and which it runs: what this machine gives
 * runs (`containment`: a sandbox of their own, jail.ts), the uids runs get as root, the
 * private-target policy, and the operator's choices. Under `deny`, scripts this machine cannot
 * contain do not run unless the operator says so (`uncontained`, --uncontained-scripts).
 */
export interface ScriptsPolicy {
  containment: Containment
  uidRange: UidRange | null
  privateTargets: PrivateTargets
  /** --uncontained-scripts */
  uncontained: boolean
  /** whether browser, multi-step and API checks' scripts run */
  scripts: boolean
  /** whether Playwright check suites run, and whether the operator chose it (--playwright-suites or --no-playwright-suites) */
  suites: boolean
  suitesChosen: boolean
}

/** See LocalServerOptions.playwrightSuites and uncontainedScripts. */
function scriptsPolicy(options: LocalServerOptions, privateTargets: PrivateTargets): ScriptsPolicy {
  const uidRange = effectiveUidRange(options.scriptUidRange)
  const held = containment(uidRange?.first ?? null)
  const uncontained = options.uncontainedScripts === true
  const scripts = held.available || privateTargets !== 'deny' || uncontained
  const suitesByDefault = held.available || (uidRange !== null && privateTargets !== 'deny') || uncontained
  return {
    containment: held,
    uidRange,
    privateTargets,
    uncontained,
    scripts,
    suites: options.playwrightSuites ?? suitesByDefault,
    suitesChosen: options.playwrightSuites !== undefined,
  }
}

/** What the server's scheduler is built with (startLocalServer's settings). */
interface SchedulerParts {
  store: Store
  services: RunServices
  metrics: ServerMetrics
  warn: (line: string) => void
  privateTargets: NonNullable<LocalServerOptions['privateTargets']>
  allowedTargets: ReturnType<typeof serverSettings>['allowedTargets']
  scriptConcurrency: number
  scripts: ScriptsPolicy
  artifacts: ReturnType<typeof artifactStoreFor>
  retentionMs: number
  alerts: AlertDeliveryWorker | undefined
}

/** The private locations' agent alerts, swept on the scheduler's tick and sent by this process's alert sender. */
function privateLocationSweep(options: LocalServerOptions, store: Store, alerts: AlertDeliveryWorker): (now: number) => Promise<number> {
  const minutes = options.noAgentAlertMinutes ?? DEFAULT_NO_AGENT_ALERT_MINUTES
  const sweep = { noAgentMs: minutes * 60_000, send: (alert: LocationAlert) => alerts.sendNow(alert) }
  return (now) => sweepPrivateLocations(store, now, sweep)
}

/** The scheduler of `monitors server` (plans; runs with `runner`), its runs and skips counted in the server's metrics; none unless asked for. */
function serverScheduler(options: LocalServerOptions, parts: SchedulerParts): Scheduler | undefined {
  const { store, services, metrics, warn, privateTargets, allowedTargets, scriptConcurrency, scripts, artifacts, retentionMs } = parts
  if (!(options.scheduler ?? options.runner === true)) return undefined
  return new Scheduler({
    log: warn,
    ...options.schedulerOptions,
    runOptions: {
      privateTargets,
      allowedTargets,
      script: {
        runtimeCache: options.runtimeCache,
        chromiumPath: options.chromiumPath,
        limiter: new Semaphore(scriptConcurrency),
        scripts: scripts.scripts,
        suites: scripts.suites,
        uidRange: options.scriptUidRange,
      },
      ...options.schedulerOptions?.runOptions,
    },
    artifacts,
    onRunStart: (run, startedAt) => {
      metrics.lag.observe({}, Math.max(0, startedAt - run.dueAt) / 1000)
      options.schedulerOptions?.onRunStart?.(run, startedAt)
    },
    onPlanned: (planned, skipped) => {
      metrics.planned.inc({}, planned)
      metrics.countSkipped(skipped)
    },
    onSchedule: (pairs) => metrics.knowSkipSeries(pairs),
    sweep: parts.alerts ? privateLocationSweep(options, store, parts.alerts) : undefined,
    store,
    services,
    plan: true,
    run: options.runner === true,
    retentionMs,
  })
}

/** The sender of alert deliveries, and the mailer of status pages' subscribers when it has an SMTP server. */
function alertSenders(
  options: LocalServerOptions,
  store: Store,
  clock: Clock,
  metrics: ServerMetrics,
  {
    retentionMs,
    privateTargets,
    allowedTargets,
    warn,
  }: {
    retentionMs: number
    privateTargets: 'allow' | 'deny'
    allowedTargets: ReturnType<typeof serverSettings>['allowedTargets']
    warn: ReturnType<typeof serverSettings>['warn']
  },
) {
  // the sender of alert deliveries: on with the scheduler (monitors server), or when asked for
  const alertsOn = options.alerts !== false && (options.alerts !== undefined || (options.scheduler ?? options.runner === true))
  const alerts = alertsOn
    ? new AlertDeliveryWorker(store, clock, {
        retentionMs,
        privateTargets,
        allowedTargets,
        log: warn,
        ...(options.alerts || {}),
        onAttempt: (channelType, outcome) => {
          metrics.attempts.inc({ channel_type: channelType, outcome })
          if (options.alerts) options.alerts.onAttempt?.(channelType, outcome)
        },
      })
    : undefined
  // status pages' email subscribers: with the alert sender, when it has an SMTP server
  const smtpUrl = alerts && options.alerts ? options.alerts.smtpUrl : undefined
  const subscriptions =
    smtpUrl && options.alerts
      ? new SubscriberMailer(store, { smtpUrl, smtpFrom: options.alerts.smtpFrom, log: options.alerts.log ?? warn, ...options.subscriberMail, clock })
      : undefined
  return { alerts, subscriptions }
}

export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  for (const url of options.publicUrls ?? []) {
    const problem = publicUrlProblem(url)
    if (problem) throw new UserError(`The public URL ${problem}`)
  }
  // the server's one clock, passed down to everything that reads the time
  const clock: Clock = { now: options.clock ?? systemClock.now }
  const metrics = new ServerMetrics(clock.now)
  if (options.metricsToken !== undefined && options.metricsToken.length < 16)
    throw new UserError('The metrics token must be at least 16 characters (e.g. openssl rand -hex 24)')
  const store = metrics.instrument(await openStore(options.dbPath ?? ':memory:', { poolSize: options.dbPoolSize, poolWaitMs: options.dbPoolWaitMs, clock }))
  try {
    const keys = await store.keys.setUp(options.apiKeys ?? [])
    // decided once, at start: one account is the usual self-hosted server watching its own
    // internal services; several accounts share it, and none may reach into its network
    const accounts = (await store.keys.accounts()).length
    const privateTargets = options.privateTargets ?? (accounts > 1 ? 'deny' : 'allow')
    const { allowedTargets, log, warn, rateLimit, authFailureLimit, trustProxy, faults, retentionMs, scriptConcurrency } = serverSettings(options)
    const artifacts = artifactStoreFor(options)
    const scripts = scriptsPolicy(options, privateTargets)
    const { alerts, subscriptions } = alertSenders(options, store, clock, metrics, { retentionMs, privateTargets, allowedTargets, warn })
    const services: RunServices = {
      now: clock.now,
      onFinalResult: finalResultHook(options, alerts, clock),
      onSkipped: (skipped: SkipCount[]) => metrics.countSkipped(skipped),
      // counted once committed: a transaction tried again counts its results once
      onCommitted: (outcome) => metrics.recordResult(outcome.run.checkId, outcome.final.details as unknown as RunResult),
    }
    const closing = new AbortController()
    const names = serverNames({ host: options.host, publicUrls: options.publicUrls })
    const app = await buildApp({
      store,
      rateLimit,
      authFailureLimit,
      trustProxy,
      ipv6s: options.ipv6s,
      log,
      warn: options.warn,
      faults,
      runs: services,
      closing: closing.signal,
      names,
      subscriptions,
      artifacts,
      metrics: { registry: metrics, token: options.metricsToken },
      limits: serverLimits(options.limits),
    })
    let requests = 0
    app.server.on('request', () => {
      requests++
    })
    const url = await listen(app, options.host ?? '127.0.0.1', options.port ?? 0)
    const scheduler = serverScheduler(options, {
      store,
      services,
      metrics,
      warn,
      privateTargets,
      allowedTargets,
      scriptConcurrency,
      scripts,
      artifacts,
      retentionMs,
      alerts,
    })
    scheduler?.start()
    alerts?.start()
    subscriptions?.start()
    let closed: Promise<void> | undefined
    return {
      url,
      apiKey: keys.apiKey,
      keyGenerated: keys.generated,
      accountId: keys.accountId,
      privateTargets: { policy: privateTargets, accounts, chosen: options.privateTargets !== undefined },
      scripts,
      requestCount: () => requests,
      faultCounts: () => (app.faultCounts ? { ...app.faultCounts } : undefined),
      completedRuns: () => scheduler?.completed ?? 0,
      close: () => {
        closing.abort()
        closed ??= (scheduler ? scheduler.stop() : Promise.resolve())
          .then(() => alerts?.stop())
          .then(() => subscriptions?.stop())
          .then(() => app.close())
          .then(() => store.close())
          .then(() => artifacts.close())
        return closed
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}
