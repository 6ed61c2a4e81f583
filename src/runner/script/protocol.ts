/**
 * What the parent and the sandboxed child (harness.ts) say to each other over the IPC channel,
 * and the per-test records that end up in a run's details. Types only.
 */
import type { ScriptCheckType } from '../../schema/check-types.js'

export interface HarnessConfig {
  checkType: ScriptCheckType
  /** The filtering proxy in front of the run's browser; null for multi-step checks. */
  wsEndpoint: string | null
  artifactsDir: string
  /** Ms from its arrival after which the harness stops starting work (the parent kills a little later): elapsed time, each process on its own timer. */
  budgetMs: number
  /** Per-test timeout (ms, 0 = none but the run's). */
  testTimeoutMs: number
  tracing: 'on' | 'retain-on-failure' | 'off'
  maxConsoleEntries: number
  maxNetworkEntries: number
  /**
   * In a contained run (its network's one way out the egress proxy), the proxy every API request
   * context of the script goes through (`http://127.0.0.1:3128`, a bridge to the egress proxy); null: none.
   */
  requestProxy: string | null
}

export interface ScriptStep {
  title: string
  status: 'passed' | 'failed' | 'skipped'
  /** ms */
  duration: number
  error: { message: string; stack?: string } | null
  steps: ScriptStep[]
}

export interface ScriptTest {
  title: string
  titlePath: string[]
  status: 'passed' | 'failed' | 'timedOut' | 'skipped'
  duration: number
  /** `kind`: a failed `expect` (assertion), anything else the script threw (error), or the test's timeout. */
  error: { message: string; stack?: string; kind?: 'assertion' | 'error' | 'timeout' } | null
  steps: ScriptStep[]
}

/** Web vitals of one page, in ms (CLS unitless); null where the page gave none. */
export interface WebVitals {
  FCP: number | null
  LCP: number | null
  CLS: number | null
  TBT: number | null
  TTFB: number | null
}

export interface ScriptPage {
  /** Order in which the run opened the page (the analytics' `pageIndex`). */
  index: number
  testIndex: number
  url: string
  webVitals: WebVitals | null
}

export interface ScriptConsoleEntry {
  /** ms since the run started */
  time: number
  page: number | null
  /** console type (log, error, warning, …), `pageerror` for an uncaught page error, `uncaught`/`unhandledrejection` for the script's own */
  type: string
  text: string
  location: string | null
}

export interface ScriptNetworkEntry {
  time: number
  /** null for the `request` fixture's calls */
  page: number | null
  method: string
  url: string
  resourceType: string
  status: number | null
  failure: string | null
  duration: number
}

export interface ErrorCounts {
  consoleErrors: number
  networkErrors: number
  userScriptErrors: number
  documentErrors: number
}

export type HarnessMessage =
  | { t: 'test-begin'; index: number; title: string }
  | { t: 'test-end'; test: ScriptTest }
  | { t: 'violation'; permission: string; resource: string }
  | { t: 'fatal'; message: string }
  | {
      t: 'result'
      loadError: { message: string; stack?: string } | null
      tests: ScriptTest[]
      pages: ScriptPage[]
      console: ScriptConsoleEntry[]
      network: ScriptNetworkEntry[]
      counts: ErrorCounts
      dropped: { console: number; network: number }
      playwrightVersion: string | null
    }
