import type { ApiCheck } from '../schema/api-check.js'
import type { DnsCheck, IcmpCheck } from '../schema/check.js'
import type { RunnableCheckType } from '../schema/check-types.js'
import type { TcpCheck } from '../schema/tcp-check.js'
import type { UrlCheck } from '../schema/url-check.js'
import type { BrowserCheck, MultiStepCheck } from '../schema/script-check.js'
import type { PlaywrightCheck } from '../schema/playwright-check.js'
import type { ScriptDetails } from './script/types.js'
import type { UidRange } from './script/contain.js'
import type { COMPARISONS } from '../schema/enums.js'
import type { PrivateTargets } from './targets.js'

/**
 * The parsed request schema of each type that runs (src/schema/check-types.ts, `runs: 'probe'`);
 * a runnable type missing here does not compile (`CheckOfType` indexes it with every one).
 */
interface ChecksByType {
  DNS: DnsCheck
  ICMP: IcmpCheck
  API: ApiCheck
  TCP: TcpCheck
  URL: UrlCheck
  BROWSER: BrowserCheck
  MULTI_STEP: MultiStepCheck
  PLAYWRIGHT: PlaywrightCheck
}

/** A check of one runnable type, as the runner takes it. */
export type CheckOfType<T extends RunnableCheckType> = ChecksByType[T] & { id?: string | null }

/** A check as the runner takes it: the schema's parsed form, with the id the store gave it. */
export type RunnableCheck = CheckOfType<RunnableCheckType>

export type Comparison = (typeof COMPARISONS)[number]
export type RunStatus = 'PASSED' | 'DEGRADED' | 'FAILED' | 'TIMED_OUT'
export type ResultType = 'FINAL' | 'ATTEMPT'

/**
 * Why a run did not pass:
 * - NETWORK_ERROR: the target could not be reached (timeout, refused, unreachable, no reply);
 *   the only kind `retryStrategy.onlyOn: ['NETWORK_ERROR']` retries.
 * - ASSERTION: the target answered, but an assertion or a threshold failed.
 * - RUNNER_ERROR: an error outside the check's control (no ping installed, no resolver
 *   configured, the run was aborted); reported as `hasErrors`.
 */
export type FailureKind = 'NETWORK_ERROR' | 'ASSERTION' | 'RUNNER_ERROR'

export interface AssertionResult {
  source: string
  property: string | null
  comparison: Comparison
  target: string
  /** The value the assertion looked at, as text (null when there was none). */
  actual: string | null
  passed: boolean
  /** Readable line, e.g. `RESPONSE_CODE EQUALS "NOERROR" failed: got "NXDOMAIN"`. */
  message: string
}

export interface DnsAnswerRecord {
  name: string
  type: string
  ttl: number
  /** Presentation form of the record data, as dig shows it. */
  data: string
}

export interface DnsDetails {
  kind: 'DNS'
  query: string
  recordType: string
  nameServer: string | null
  port: number
  protocol: 'UDP' | 'TCP'
  /** Response code name (NOERROR, NXDOMAIN, SERVFAIL, REFUSED, …); null when nothing came back. */
  rcode: string | null
  answers: DnsAnswerRecord[]
  /** The answer section as zone-file lines (the TEXT_ANSWER source). */
  textAnswer: string
  /** The response as JSON (the JSON_ANSWER source), shaped like DNS-over-HTTPS JSON. */
  jsonAnswer: DnsJsonAnswer | null
}

export interface DnsJsonAnswer {
  Status: number
  TC: boolean
  RD: boolean
  RA: boolean
  AD: boolean
  CD: boolean
  Question: Array<{ name: string; type: number }>
  Answer: Array<{ name: string; type: number; TTL: number; data: string }>
  Authority: Array<{ name: string; type: number; TTL: number; data: string }>
}

export interface LatencyStats {
  avg: number
  min: number
  max: number
  stddev: number
}

export interface IcmpDetails {
  kind: 'ICMP'
  hostname: string
  ipFamily: 'IPv4' | 'IPv6'
  /** Address ping resolved the hostname to, when it said. */
  ipAddress: string | null
  pingCount: number
  packetsSent: number
  packetsReceived: number
  /** Percent, 0–100; null when ping reported nothing (not started, failed before sending). */
  packetLoss: number | null
  /** Null when no reply came back. */
  latency: LatencyStats | null
  /** One entry per reply: sequence number, ttl and round trip in ms. */
  pings: Array<{ seq: number; ttl: number | null; time: number }>
}

/** Phases of an HTTP exchange, in ms (summed over the redirects followed). */
export interface ApiTimings {
  /** Name lookup (0 when the URL names an IP address). */
  dns: number
  /** TCP connect, from the lookup's end. */
  tcp: number
  /** TLS handshake, from the TCP connect (0 for http). */
  tls: number
  /** Wait: from the request fully sent to the response's headers. */
  firstByte: number
  /** From the response's headers to its last byte. */
  download: number
  /** The whole exchange: the run's response time. */
  total: number
}

export interface ApiDetails {
  kind: 'API'
  method: string
  /** The URL requested (variables resolved, query parameters appended, secrets masked). */
  url: string
  /** Status code of the last response; null when none came. */
  statusCode: number | null
  /** Headers of the last response, names in lower case. */
  headers: Record<string, string>
  /** The body's first 64 KiB as text (assertions see up to 1 MiB). */
  body: string
  /** Bytes of the body received. */
  bodySize: number
  bodyTruncated: boolean
  /** Redirects followed, in order: the status and where it pointed. */
  redirects: Array<{ statusCode: number; location: string }>
  timings: ApiTimings | null
  /** Whole days until the TLS certificate's `valid_to` (negative when expired); null for http. */
  sslDaysRemaining: number | null
  remoteAddress: string | null
  /** The setup and teardown scripts the run ran, in order (absent when the check has none). */
  scripts?: ApiScriptReport[]
}

/** One setup or teardown script of an API check's run (docs/scripts.md). */
export interface ApiScriptReport {
  phase: 'setup' | 'teardown'
  /** `snippet 12 "Auth helper"`, `localSetupScript` or `localTearDownScript` */
  script: string
  durationMs: number
  /** Why it failed (secrets scrubbed); null when it finished. */
  error: string | null
  /** What it printed (the last 16 KiB, secrets scrubbed). */
  logs: string
}

/** A URL check's run: an API check's details (a GET, no body sent). */
export type UrlDetails = Omit<ApiDetails, 'kind'> & { kind: 'URL' }

/** Phases of a TCP run, in ms. */
export interface TcpTimings {
  /** Name lookup (0 when the hostname is an IP address). */
  dns: number
  /** TCP connect (the handshake). */
  connect: number
  /** From the connection to the answer's last byte (sending `data` included); 0 when nothing is read. */
  data: number
  /** dns + connect + data: the run's response time. */
  total: number
}

export interface TcpDetails {
  kind: 'TCP'
  hostname: string
  port: number
  ipFamily: 'IPv4' | 'IPv6'
  /** The address connected to; null when no connection was made. */
  remoteAddress: string | null
  /** Whether `request.data` was sent. */
  dataSent: boolean
  /** The answer read, as UTF-8 text (at most 64 KiB). */
  response: string
  /** Bytes of the answer read. */
  responseSize: number
  /** The answer reached 64 KiB: reading stopped there (anything after it was not read). */
  responseTruncated: boolean
  timings: TcpTimings | null
}

export interface RunResult {
  checkId: string | null
  name: string
  checkType: RunnableCheckType
  runLocation: string
  resultType: ResultType
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number
  startedAt: string
  stoppedAt: string
  /** Milliseconds: the DNS exchange, or the ICMP average round trip. Null when nothing was measured. */
  responseTime: number | null
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  timedOut: boolean
  aborted: boolean
  status: RunStatus
  /** Kind of the failure, after `shouldFail` (null when the run passed or was degraded). */
  failureKind: FailureKind | null
  /** The first reason the run did not pass, readable; null when it passed. */
  error: string | null
  assertions: AssertionResult[]
  details: DnsDetails | IcmpDetails | ApiDetails | TcpDetails | UrlDetails | ScriptDetails
  /**
   * Days the certificate of the check's `sslCheckDomain` has left (negative when expired; null
   * when it could not be read). Present only when the check names a domain; it then is the
   * run's certificate, over an API or URL check's own (`details.sslDaysRemaining`).
   */
  sslDaysRemaining?: number | null
  /** The certificate of `sslCheckDomain`, as this run read it; present only when the check names one. */
  sslCheck?: SslCheckResult
}

/** What a run found of the certificate of its check's `sslCheckDomain`. */
export interface SslCheckResult {
  domain: string
  /** Whole days until the certificate's end (negative when expired); null when none was read. */
  daysRemaining: number | null
  /**
   * The run's certificate error, readable: why no certificate was read (a name that does not
   * resolve, refused, timed out, no TLS), or why the one read is not trusted (issuer, name,
   * expired); null when it was read and is trusted. Never a failure of the run itself.
   */
  error: string | null
}

/** An attempt before anything happened: no time, no assertion, no failure yet. */
export function emptyOutcome(details: AttemptOutcome['details'], runnerError: string | null = null): AttemptOutcome {
  return { responseTime: null, assertions: [], failures: [], degraded: [], timedOut: false, networkError: false, runnerError, aborted: false, details }
}

/** The result of one scheduled run: the FINAL result, with the retried attempts before it. */
export interface CheckRunResult extends RunResult {
  resultType: 'FINAL'
  /** The ATTEMPT results that were retried, oldest first (empty when the first attempt was final). */
  attempts: RunResult[]
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

export interface RunOptions {
  /** Location the run is for (default `local`). */
  location?: string
  /** Aborts the run in flight (and any pending retry). */
  signal?: AbortSignal
  /** Wall clock for startedAt/stoppedAt (default the system's, src/runner/clock.ts). Response times use a monotonic clock. */
  now?: () => number
  /** Waits between retries (default a real timer); tests inject one that does not wait. */
  sleep?: Sleep
  /** Hard cap in ms for one attempt, on top of the check's own limits. */
  timeoutMs?: number
  /** `false` runs the check once, whatever its retry strategy says. */
  retries?: boolean
  /** Ping binary (default `ping` from PATH). */
  pingPath?: string
  /** Seconds between echo requests (default 0.2, the smallest iputils allows without privileges). */
  pingIntervalSeconds?: number
  /** Name servers used when a DNS check names none (default: /etc/resolv.conf, then node's). */
  systemNameServers?: () => string[]
  /**
   * The account's variables, for `{{KEY}}` references of API checks; a secret one is masked in
   * every result. A reference to a key that is not here is an error of the run.
   */
  variables?: Record<string, string | { value: string; secret?: boolean }>
  /**
   * The private-target policy (targets.ts): `deny` refuses loopback, private, link-local and
   * the machine's own addresses, on the address connected to; default `allow`.
   */
  privateTargets?: PrivateTargets
  /** Exceptions to `deny`: addresses, CIDR ranges or address:port (targets.ts). */
  allowedTargets?: readonly string[]
  /**
   * For tests only: the port `sslCheckDomain` is connected to instead of 443 (a test serves its
   * own certificate for `localhost` on a free port). The product never sets it.
   */
  tlsPort?: number
  /**
   * The snippets an API check's `setupSnippetId` / `tearDownSnippetId` may name, by id as text
   * (the server's and agent's: the account's snippets the check names; `monitors test`: the
   * project's, by reference placeholder). A check naming one not here fails with `hasErrors`.
   */
  snippets?: Record<string, { name: string; script: string }>
  /** Limits of an API check's setup and teardown scripts (default 10 s each, 128 MB heap, 256 MB memory). */
  scriptLimits?: { timeoutMs?: number; heapLimitMb?: number; memoryLimitMb?: number; diskLimitBytes?: number }
  /** Where the scripts' runtimes are prepared (default `defaultRuntimeCache()`). */
  runtimeCache?: string
  /** Where the scripts' temporary folders are made (default the OS's temporary folder). */
  workDir?: string
  /** A run of `monitors test`: `CI=true` in the scripts' environment. */
  testSession?: boolean
  /** How browser and multi-step checks run here (src/runner/script-probe.ts). */
  script?: ScriptProbeOptions
}

/** What a browser or multi-step check's run needs besides the check: see runScript's options (docs/scripts.md). */
export interface ScriptProbeOptions {
  runtimeCache?: string
  chromiumPath?: string
  /** Where each run's temporary folder and artifact folder are made (default the OS's temporary folder). */
  workDir?: string
  /** Wall-clock limit of one run, ms (default 120 000). */
  timeoutMs?: number
  memoryLimitMb?: number
  tracing?: 'on' | 'retain-on-failure' | 'off'
  /** A run of a test session (`monitors test`, a triggered session): CI=true in the script's environment. */
  testSession?: boolean
  /**
   * Whether Playwright check suites run here (default true: agents, `monitors test`). The
   * server's runner sets it from --playwright-suites, by default only where each run is contained
   * (jail.ts) or gets a user of its own (root): without either a suite's `playwright test` is not
   * held to its files.
   */
  suites?: boolean
  /**
   * Whether browser, multi-step and API checks' scripts run here (default true). The server's
   * runner turns it off under --private-targets deny on a machine that cannot contain them,
   * unless --uncontained-scripts (src/server/index.ts's scriptsPolicy).
   */
  scripts?: boolean
  /** The uids a suite's run is given when this process is root (src/runner/script/contain.ts; 'off': none). */
  uidRange?: UidRange | 'off'
  /** Script runs at a time in this process: a run waits for a free place before it starts (see Semaphore). */
  limiter?: { run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>; readonly size?: number }
}

/** What one attempt of a type-specific runner found, before retries and shouldFail. */
export interface AttemptOutcome {
  responseTime: number | null
  /** Assertion results (passed and failed). */
  assertions: AssertionResult[]
  /** Failures that are not assertions (thresholds, response code, no reply), readable. */
  failures: string[]
  degraded: string[]
  timedOut: boolean
  networkError: boolean
  /** An error outside the check's control; set, the run `hasErrors`. */
  runnerError: string | null
  aborted: boolean
  details: DnsDetails | IcmpDetails | ApiDetails | TcpDetails | UrlDetails | ScriptDetails
}
