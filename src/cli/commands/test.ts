import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import pc from 'picocolors'
import type { LoadedProject } from '../../project/index.js'
import type { DesiredResource } from '../../resources/types.js'
import { CHECK_KINDS } from '../../resources/registry.js'
import { placeholder } from '../../resources/refs.js'
import { matchTargets } from '../../plan/select.js'
import { LOCATIONS } from '../../schema/enums.js'
import { isRunnableCheckType, isScriptCheckType } from '../../schema/check-types.js'
import {
  DEFAULT_LOCATION,
  defaultScriptConcurrency,
  runCheck,
  Semaphore,
  type CheckRunResult,
  type DnsDetails,
  type IcmpDetails,
  type RunnableCheck,
} from '../../runner/index.js'
import type { ScriptDetails } from '../../runner/script/types.js'
import { mkdirSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import { splitServer } from '../../runner/dns.js'
import { checkNumber, data, envOption, err, loadOrReport, out, setStdoutFormat, useColor, withEnvironment } from '../engine.js'
import { UserError } from '../../errors.js'
import { uidRangeFromEnv } from '../uid-range.js'

interface TestArgs {
  config?: string
  env?: string
  target?: string[]
  format?: 'text' | 'json'
  location?: string
  retries?: boolean
  concurrency?: number
  nameServer?: string
}

class TestRefusal extends UserError {}

/** One check of the project, tested once in one location. */
export interface TestedCheck {
  resource: DesiredResource
  check: RunnableCheck
  location: string
  result: CheckRunResult
  /** A DNS check's resolver when the check names none: this machine's, or --name-server's. */
  resolver?: Resolver
}

/** The name server a DNS check without `request.nameServer` asked, and where it came from. */
export interface Resolver {
  /** null: this machine has none configured (the run is an error). */
  nameServer: string | null
  port: number
  from: 'system' | '--name-server'
}

/**
 * The line under the table naming the resolver the DNS checks without `request.nameServer`
 * asked: on the service each location has its own, here it is this machine's (or --name-server's).
 */
export function resolverNotes(tested: readonly TestedCheck[]): string[] {
  const groups = new Map<string, { resolver: Resolver; checks: string[] }>()
  for (const t of tested) {
    if (!t.resolver) continue
    const key = `${t.resolver.from} ${t.resolver.nameServer} ${t.resolver.port}`
    const group = groups.get(key) ?? { resolver: t.resolver, checks: [] }
    group.checks.push(label(t.resource))
    groups.set(key, group)
  }
  return [...groups.values()].map(({ resolver, checks }) => {
    const which =
      resolver.nameServer === null
        ? 'no resolver: this machine has none configured (/etc/resolv.conf); pass --name-server HOST[:PORT]'
        : resolver.from === '--name-server'
          ? `${resolver.nameServer} port ${resolver.port} (--name-server)`
          : `${resolver.nameServer} port ${resolver.port}, this machine's resolver (/etc/resolv.conf; --name-server HOST[:PORT] asks another)`
    return `Without request.nameServer, ${checks.length === 1 ? 'this DNS check asked' : `these ${checks.length} DNS checks asked`} ${which}: ${checks.join(', ')}`
  })
}

const CHECK_KIND_LIST = [...CHECK_KINDS].join(', ')

/** The checks `--target` names (all of them without one); a target naming no check is refused. */
export function selectChecks(resources: readonly DesiredResource[], targets: readonly string[]): DesiredResource[] {
  const checks = resources.filter((r) => CHECK_KINDS.has(r.kind))
  if (targets.length === 0) return checks
  const byKey = new Map(checks.map((r) => [`${r.kind}:${r.logicalId}`, r]))
  const { wanted, bad } = matchTargets(targets, byKey)
  if (bad.length > 0) {
    throw new TestRefusal(
      `--target ${bad.map((t) => JSON.stringify(t)).join(', ')} ${bad.length === 1 ? 'names' : 'name'} no check in the project. ` +
        `Write kind:logicalId, with kind one of ${CHECK_KIND_LIST} (or the construct name, e.g. DnsCheck:shop-dns or IcmpCheck:edge-ping).`,
    )
  }
  return checks.filter((r) => wanted.has(`${r.kind}:${r.logicalId}`))
}

/** Checks `monitors test` runs: all but heartbeat checks. */
const isRunnable = (r: DesiredResource): boolean => isRunnableCheckType(r.payload.checkType)

/** A run that did not pass: FAILED, TIMED_OUT, or an error outside the check. DEGRADED is not a failure. */
export function isFailure(result: CheckRunResult): boolean {
  return result.hasFailures || result.hasErrors || result.status === 'FAILED' || result.status === 'TIMED_OUT'
}

/** Why a run is DEGRADED: the threshold it crossed, read from the check and the run's figures. */
function degradedReason(check: RunnableCheck, result: CheckRunResult): string {
  const reasons: string[] = []
  if (check.checkType === 'ICMP') {
    const loss = (result.details as IcmpDetails).packetLoss
    const max = check.degradedPacketLossThreshold
    if (loss !== null && max !== null && loss > max) reasons.push(`packet loss ${loss}% is over degradedPacketLossThreshold ${max}%`)
  }
  const time = result.responseTime
  const limit = 'degradedResponseTime' in check ? check.degradedResponseTime : null
  if (time !== null && limit !== null && time > limit) reasons.push(`response time ${time} ms is over degradedResponseTime ${limit} ms`)
  return reasons.join('; ')
}

/** Runs `work` over `items` with at most `limit` in flight, keeping the order of `items`. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/** `host`, `host:port` or `[v6]:port` with a port from 1 to 65535, or a bare IPv6 address. */
function validNameServer(text: string): boolean {
  if (text.trim() === '' || /\s/.test(text)) return false
  const { host, port } = splitServer(text)
  return host !== '' && (port === null || (port >= 1 && port <= 65535))
}

function label(resource: DesiredResource): string {
  return `${resource.kind}:${resource.logicalId}`
}

function formatTime(ms: number | null): string {
  if (ms === null) return '-'
  return `${ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms)} ms`
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** `3 passed, 1 degraded, 1 failed` (+ how many of the failures were errors or timeouts). */
export function summaryLine(tested: readonly TestedCheck[]): string {
  const passed = tested.filter((t) => t.result.status === 'PASSED' && !isFailure(t.result)).length
  const degraded = tested.filter((t) => t.result.status === 'DEGRADED' && !isFailure(t.result)).length
  const failed = tested.filter((t) => isFailure(t.result))
  const errors = failed.filter((t) => t.result.hasErrors).length
  const timedOut = failed.filter((t) => t.result.status === 'TIMED_OUT').length
  const notes = [...(timedOut ? [`${timedOut} timed out`] : []), ...(errors ? [plural(errors, 'error')] : [])]
  return `${passed} passed, ${degraded} degraded, ${failed.length} failed${notes.length ? ` (${notes.join(', ')})` : ''}`
}

/** Why a check is not run from this machine (a heartbeat check), for its row. */
const NOT_RUN_DETAIL = 'a heartbeat check has nothing to run from this machine: it passes on pings to its ping URL (see monitors status)'

/** The table: check, location, result, response time and why it did not pass; checks not run get a NOT RUN row. */
export function renderTable(tested: readonly TestedCheck[], color: boolean, notRun: readonly DesiredResource[] = []): string {
  const c = pc.createColors(color)
  const rows = tested.map(({ resource, check, result }) => {
    const inactive = check.activated === false ? ' [deactivated]' : ''
    const status = `${result.status}${result.hasErrors ? ' (error)' : ''}`
    const detail = isFailure(result) ? (result.error ?? '') : result.status === 'DEGRADED' ? degradedReason(check, result) : ''
    const n = result.attempts.length
    const retried = n > 0 ? ` (after ${n} ${n === 1 ? 'retry' : 'retries'})` : ''
    return {
      cells: [`${label(resource)} "${check.name}"${inactive}`, result.runLocation, status, formatTime(result.responseTime)],
      detail: `${detail}${retried}`,
      paint: isFailure(result) ? c.red : result.status === 'DEGRADED' ? c.yellow : c.green,
    }
  })
  for (const resource of notRun) {
    rows.push({ cells: [`${label(resource)} "${String(resource.payload.name ?? '')}"`, '-', 'NOT RUN', '-'], detail: NOT_RUN_DETAIL, paint: c.dim })
  }
  const head = ['CHECK', 'LOCATION', 'RESULT', 'TIME']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r.cells[i].length)))
  const line = (cells: string[], paintResult: (s: string) => string = (s) => s) =>
    cells
      .map((cell, i) => {
        const padded = i === 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])
        return i === 2 ? paintResult(padded) : padded
      })
      .join('  ')
  const lines = [c.bold(`${line(head)}  DETAIL`).trimEnd()]
  for (const row of rows) lines.push(`${line(row.cells, row.paint)}  ${row.detail}`.trimEnd())
  return `${lines.join('\n')}\n`
}

/** The JSON document of `monitors test --format json`. */
export function testToJson(tested: readonly TestedCheck[], notRun: readonly DesiredResource[] = []) {
  const failed = tested.filter((t) => isFailure(t.result)).length
  return {
    formatVersion: 1,
    ok: failed === 0,
    summary: {
      total: tested.length,
      passed: tested.filter((t) => t.result.status === 'PASSED' && !isFailure(t.result)).length,
      degraded: tested.filter((t) => t.result.status === 'DEGRADED' && !isFailure(t.result)).length,
      failed,
      errors: tested.filter((t) => t.result.hasErrors).length,
      timedOut: tested.filter((t) => t.result.status === 'TIMED_OUT').length,
      notRun: notRun.length,
    },
    results: tested.map(({ resource, check, result, resolver }) => ({
      kind: resource.kind,
      logicalId: resource.logicalId,
      construct: resource.construct,
      file: resource.file,
      activated: check.activated,
      ...result,
      ...(resolver ? { resolver } : {}),
    })),
    notRun: notRun.map((resource) => ({
      kind: resource.kind,
      logicalId: resource.logicalId,
      construct: resource.construct,
      file: resource.file,
      reason: NOT_RUN_DETAIL,
    })),
  }
}

const LOCATION_NAMES: readonly string[] = [DEFAULT_LOCATION, ...LOCATIONS]

/** Runs every selected check once, in parallel (at most `concurrency` at once). */
export async function testChecks(
  project: LoadedProject,
  options: { targets?: readonly string[]; location?: string; retries?: boolean; concurrency?: number; signal?: AbortSignal; nameServer?: string },
): Promise<TestedCheck[]> {
  const selected = selectChecks(project.resources, options.targets ?? []).filter(isRunnable)
  // an API check's {{KEY}} references are resolved from the project's EnvVar constructs
  const variables: Record<string, { value: string; secret: boolean }> = {}
  for (const r of project.resources) {
    if (r.kind === 'variable' && typeof r.payload.key === 'string')
      variables[r.payload.key] = { value: String(r.payload.value ?? ''), secret: r.payload.secret === true }
  }
  // an API check's setup and teardown snippets are the project's Snippet constructs (its
  // setupSnippetId holds the reference until apply makes it an id)
  const snippets: Record<string, { name: string; script: string }> = {}
  for (const r of project.resources) {
    if (r.kind === 'snippet') snippets[placeholder('snippet', r.logicalId)] = { name: String(r.payload.name ?? ''), script: String(r.payload.script ?? '') }
  }
  // browser, multi-step and Playwright suite runs: their artifacts in the project's .monitors/test-results, a few at a time
  const resultsDir = path.join(project.rootDir, '.monitors', 'test-results')
  // a suite runs as a user of its own only when MONITORS_SCRIPT_UID_RANGE asks for it: here it is the
  // project's own code on its own machine (often a CI container's root, whose ~/.cache others cannot read)
  const script = { testSession: true, workDir: resultsDir, limiter: new Semaphore(defaultScriptConcurrency()), uidRange: uidRangeFromEnv() ?? ('off' as const) }
  if (selected.some((r) => isScriptCheckType(r.payload.checkType))) mkdirSync(resultsDir, { recursive: true })
  return mapBounded(selected, Math.max(1, options.concurrency ?? 8), async (resource) => {
    let check = resource.payload as unknown as RunnableCheck
    const ownResolver = check.checkType !== 'DNS' || Boolean(check.request.nameServer)
    if (!ownResolver && options.nameServer && check.checkType === 'DNS') check = { ...check, request: { ...check.request, nameServer: options.nameServer } }
    const location = options.location ?? check.locations?.[0] ?? DEFAULT_LOCATION
    const result = await runCheck(check, {
      location,
      retries: options.retries === true,
      signal: options.signal,
      variables,
      snippets,
      testSession: true,
      script,
    })
    keepTestArtifacts(result, path.join(resultsDir, `${resource.kind}-${resource.logicalId.replace(/[^\w.-]/g, '_')}`))
    const details = result.details as Partial<DnsDetails>
    const resolver: Resolver | undefined =
      ownResolver || details.kind !== 'DNS'
        ? undefined
        : { nameServer: details.nameServer ?? null, port: details.port ?? 53, from: options.nameServer ? '--name-server' : 'system' }
    return { resource, check, location, result, ...(resolver ? { resolver } : {}) }
  })
}

/**
 * Moves a script run's artifacts to the check's own folder (the last run's replace the one
 * before), its attempts' folders removed; the result's manifest then names that folder.
 */
function keepTestArtifacts(result: CheckRunResult, to: string): void {
  for (const attempt of result.attempts) {
    const dir = (attempt.details as Partial<ScriptDetails>).artifacts?.dir
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
  const manifest = (result.details as Partial<ScriptDetails>).artifacts
  if (!manifest?.dir) return
  rmSync(to, { recursive: true, force: true })
  renameSync(manifest.dir, to)
  manifest.dir = to
}

/** Where each browser, multi-step or Playwright suite run left its artifacts, and how to open its traces. */
export function artifactNotes(tested: readonly TestedCheck[], cwd: string): string[] {
  const notes: string[] = []
  for (const { resource, result } of tested) {
    const manifest = (result.details as Partial<ScriptDetails>).artifacts
    if (!manifest?.dir || manifest.files.length === 0) continue
    const shown = path.relative(cwd, manifest.dir) || '.'
    const count = (kind: string) => manifest.files.filter((f) => f.kind === kind).length
    const parts = [plural(count('screenshot'), 'screenshot'), plural(count('trace'), 'trace')].filter((p) => !p.startsWith('0 '))
    notes.push(`Artifacts of ${label(resource)}: ${shown}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`)
    for (const trace of manifest.files.filter((f) => f.kind === 'trace')) notes.push(`  npx playwright show-trace ${path.join(shown, trace.name)}`)
    if (manifest.dropped.length > 0) notes.push(`  dropped over the run's limit: ${manifest.dropped.map((d) => d.name).join(', ')}`)
  }
  return notes
}

/**
 * `monitors test`: runs the project's DNS, ICMP, API, TCP and URL checks once, from this machine, through the
 * same runners as the server, without deploying anything and without any API. Exit 1 when a
 * run failed, timed out or had an error; a degraded run passes (exit 0).
 */
export const testCommand = {
  command: 'test',
  describe: 'Run every check of the project once from this machine and show the results, without deploying anything',
  builder: (yargs: Argv) =>
    envOption(yargs)
      .option('config', { alias: 'c', type: 'string', describe: 'Config file (default: monitoring.config.ts in this or a parent directory)' })
      .option('target', {
        type: 'string',
        array: true,
        describe: 'Test only this check: kind:logicalId (e.g. dns-check:shop-dns or DnsCheck:shop-dns); repeatable',
      })
      .option('format', {
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'Output: a table for a terminal, or json (every result record) on stdout with the table on stderr',
      })
      .option('location', {
        type: 'string',
        describe: "Location each run is labelled with (default: the check's first location, or local). Runs always go out from this machine",
      })
      .option('retries', {
        type: 'boolean',
        default: false,
        describe: "Retry a failed run as the check's retryStrategy (or doubleCheck) says, waiting its backoff; off by default for fast feedback",
      })
      .option('name-server', {
        type: 'string',
        requiresArg: true,
        describe: "Resolver for the DNS checks that name no request.nameServer, as HOST or HOST:PORT (default: this machine's, from /etc/resolv.conf)",
      })
      .option('concurrency', {
        type: 'number',
        default: 8,
        requiresArg: true,
        coerce: checkNumber('--concurrency', 'a whole number of at least 1', (n) => Number.isInteger(n) && n >= 1),
        describe: 'Checks running at once',
      }),
  handler: async (args: ArgumentsCamelCase<TestArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    if (args.location !== undefined && !LOCATION_NAMES.includes(args.location)) {
      throw new TestRefusal(`--location "${args.location}" is not a location. Write one of ${LOCATION_NAMES.join(', ')}.`)
    }
    if (args.nameServer !== undefined && !validNameServer(args.nameServer)) {
      throw new TestRefusal(
        `--name-server "${args.nameServer}" is not a name server: write HOST or HOST:PORT (an IPv6 address with a port in brackets, [::1]:53).`,
      )
    }
    const project = await loadOrReport({ config: args.config, env: args.env })
    if (!project) return 1
    const environment = project.config.environment?.name
    const all = selectChecks(project.resources, args.target ?? [])
    // a heartbeat check is not run: it is judged by the pings its job sends (a NOT RUN row says so)
    const notRun = all.filter((c) => !isRunnable(c))
    const count = all.filter(isRunnable).length
    if (count === 0) {
      for (const r of notRun) out(`${r.kind}:${r.logicalId} is not run: it passes on pings to its ping URL (see monitors status).\n`)
      out('No checks to test: the project has no DnsCheck, IcmpCheck, ApiCheck, TcpCheck, UrlCheck, BrowserCheck, MultiStepCheck or PlaywrightCheck.\n')
      if (args.format === 'json') data(`${JSON.stringify(withEnvironment(testToJson([], notRun), environment), null, 2)}\n`)
      return 0
    }
    // Ctrl-C stops the runs in flight: they end as errors (aborted) and are still reported.
    const controller = new AbortController()
    const onSignal = () => {
      if (controller.signal.aborted) process.exit(130)
      err('\nInterrupted: stopping the runs in flight (Ctrl-C again to quit now).\n')
      controller.abort()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    err(
      pc
        .createColors(useColor())
        .dim(
          `Testing ${plural(count, 'check')}${environment !== undefined ? ` of the environment ${environment}` : ''} from this machine; nothing is deployed.\n`,
        ),
    )
    let tested: TestedCheck[]
    try {
      tested = await testChecks(project, {
        targets: args.target,
        location: args.location,
        retries: args.retries,
        concurrency: args.concurrency,
        signal: controller.signal,
        nameServer: args.nameServer,
      })
    } finally {
      process.removeListener('SIGINT', onSignal)
      process.removeListener('SIGTERM', onSignal)
    }

    const c = pc.createColors(useColor())
    const failed = tested.some((t) => isFailure(t.result))
    out(renderTable(tested, useColor(), notRun))
    const notes = resolverNotes(tested)
    if (notes.length > 0) out(c.dim(`${notes.join('\n')}\n`))
    const artifacts = artifactNotes(tested, process.cwd())
    if (artifacts.length > 0) out(`${artifacts.join('\n')}\n`)
    const notRunNote = notRun.length > 0 ? `, ${notRun.length} not run` : ''
    out(`\n${failed ? c.red('Test failed:') : c.green('Test passed:')} ${summaryLine(tested)}${notRunNote}.\n`)
    if (args.format === 'json') data(`${JSON.stringify(withEnvironment(testToJson(tested, notRun), environment), null, 2)}\n`)
    return failed ? 1 : 0
  },
} as unknown as CommandModule<object, TestArgs>
