import type { ScriptCheckType } from '../../schema/check-types.js'
import type { FailureKind, ResultType, RunStatus } from '../types.js'
import type { PrivateTargets } from '../targets.js'
import type { ErrorCounts, ScriptConsoleEntry, ScriptNetworkEntry, ScriptPage, ScriptTest, WebVitals } from './protocol.js'
import type { ScriptFiles } from './build.js'
import type { UidRange } from './contain.js'

export type { ErrorCounts, ScriptConsoleEntry, ScriptNetworkEntry, ScriptPage, ScriptStep, ScriptTest, WebVitals } from './protocol.js'
export type { ScriptFiles } from './build.js'

export type { ScriptCheckType }
/** The check types whose runs this folder makes (Playwright check suites: suite.ts). */
export type ScriptResultType = ScriptCheckType
/** The types the script engine runs (engine.ts: one script in a sandboxed child); a Playwright suite runs through suite.ts. */
export type EngineCheckType = Exclude<ScriptCheckType, 'PLAYWRIGHT'>

/** One environment variable of the check (the API's `environmentVariables` items) or of the account. */
export interface ScriptVariable {
  key: string
  value: string
  secret?: boolean
}

/** What runs: the check's stored fields. */
export interface ScriptCheck extends ScriptFiles {
  id?: string | null
  name: string
  checkType: EngineCheckType
  /** null or absent: the newest runtime. */
  runtimeId?: string | null
  environmentVariables?: ReadonlyArray<ScriptVariable> | null
  shouldFail?: boolean
}

export interface ScriptRunOptions {
  /** Where runtimes are prepared (default `defaultRuntimeCache()`). */
  runtimeCache?: string
  /** Where a run's temporary folder is made (default the OS's temporary folder). */
  workDir?: string
  /**
   * Where the run's artifacts are kept (a folder made for this run; default a folder
   * `monitors-artifacts-*` in `workDir`). The caller owns it afterwards.
   */
  artifactsDir?: string
  /** Wall-clock limit of the whole run in ms, browser start included (default 120 000). */
  timeoutMs?: number
  /** Limit of one test in ms (default 0: only the run's limit). */
  testTimeoutMs?: number
  /** The script's V8 heap (`--max-old-space-size`), MB (default 512). */
  heapLimitMb?: number
  /** Resident memory of the script's process and its browser together, MB (default 2048). */
  memoryLimitMb?: number
  /** Bytes written to the run's scratch and artifact folders; a suite's: its run folder and results (default 512 MiB). */
  diskLimitBytes?: number
  /** What the artifacts of one run may weigh (default 150 MB, the spec's limit). */
  artifactLimitBytes?: number
  /** Keep the trace of every test, or of failed tests only (default). */
  tracing?: 'on' | 'retain-on-failure' | 'off'
  /** A run of a test session (`monitors test`): `CI=true` in the script's environment. */
  testSession?: boolean
  /** The account's variables, visible to the script after the check's own (which win). */
  variables?: ReadonlyArray<ScriptVariable>
  /** More values to scrub (secrets the caller knows of). */
  secrets?: readonly string[]
  location?: string
  /** Chromium binary (default `/usr/bin/chromium`, or `$CHROMIUM_PATH`). */
  chromiumPath?: string
  /**
   * The uids a Playwright check suite's run is given when this process is root (contain.ts):
   * default `$MONITORS_SCRIPT_UID_RANGE`, else 200000-200999; 'off' runs suites as root.
   */
  uidRange?: UidRange | 'off'
  /**
   * The private-target policy (targets.ts) and its exceptions: under `deny`, the script's own
   * connections are checked in its process, the browser's go out through the egress proxy.
   */
  privateTargets?: PrivateTargets
  allowedTargets?: readonly string[]
  signal?: AbortSignal
  /** Wall clock (default the system's, src/runner/clock.ts). */
  now?: () => number
}

/** One file a run kept. */
export interface ArtifactEntry {
  /** Path inside the artifacts folder (`screenshots/1-login-failure.png`). */
  name: string
  kind: 'screenshot' | 'trace' | 'console' | 'network' | 'log' | 'attachment' | 'other'
  bytes: number
  contentType: string
}

export interface ArtifactManifest {
  /** Absolute folder holding the kept files (null when nothing was kept). */
  dir: string | null
  files: ArtifactEntry[]
  totalBytes: number
  limitBytes: number
  /** Files the run produced but did not keep, and why (over the limit). */
  dropped: Array<{ name: string; kind: ArtifactEntry['kind']; bytes: number; reason: string }>
}

export interface ScriptDetails {
  kind: ScriptResultType
  runtimeId: string
  playwrightVersion: string | null
  nodeVersion: string
  tests: ScriptTest[]
  pages: ScriptPage[]
  /** The first page's web vitals (the analytics' FCP, LCP, CLS, TBT, TTFB); null without a page. */
  webVitals: WebVitals | null
  errors: ErrorCounts
  /** Console messages of the pages and of the script's own uncaught errors (first 1 000). */
  console: ScriptConsoleEntry[]
  /** Requests of the pages and of the `request` fixture (first 2 000). */
  network: ScriptNetworkEntry[]
  /** What the script printed (stdout and stderr, last 64 KiB). */
  logs: string
  /** Accesses the sandbox refused. */
  violations: string[]
  memory: { peakScriptRssBytes: number; peakBrowserRssBytes: number }
  artifacts: ArtifactManifest
}

/** A `RunResult`-shaped record (src/runner/types.ts) for script checks. */
export interface ScriptRunResult {
  checkId: string | null
  name: string
  checkType: ScriptResultType
  runLocation: string
  resultType: ResultType
  attempt: number
  startedAt: string
  stoppedAt: string
  /** The run's whole duration, ms. */
  responseTime: number
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  timedOut: boolean
  aborted: boolean
  status: RunStatus
  failureKind: FailureKind | null
  error: string | null
  assertions: []
  details: ScriptDetails
}
