import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { runCheck, type CheckRunResult, type RunnableCheck, type RunOptions } from '../../runner/index.js'
import { RunLoop, type WorkSource } from '../../runner/run-loop.js'
import { checkTypeEntry, isRunnableCheckType, isScriptCheckType, SCRIPT_CHECK_TYPES } from '../../schema/check-types.js'
import { applyGroup, type CheckGroup, type MaintenanceWindow } from '../../schema/index.js'
import { leaseHeld, StagedUploads, type ArtifactStore } from '../artifacts.js'
import { detachRunArtifacts, discardFolders } from '../../runner/script-probe.js'
import type { ClaimedRun, ClaimQuery, CompleteOutcome, PlannedRun, SkipCount, Store, VariableRecord } from '../store/index.js'
import { checkLocations, graceMs, latestDueOf, locationsFor, timingOf, type ScheduleFields, type Timing } from './due.js'
import { inMaintenance } from './maintenance.js'
import { completeRun, completeRuns, type RunServices } from './runs.js'
import { runVariables, withGroup } from '../groups.js'
import { sweepHeartbeats } from '../heartbeats/index.js'
import { OutageLog, untilAvailable } from '../outage.js'

export { completeRun, completeRuns, type FinalResultHook, type RunServices } from './runs.js'

/*
 * The scheduler of one server process, two independent parts:
 * - the planner (every tick) writes the due runs of every activated check into the store;
 *   planning is idempotent (one row per check, location and due time), so any number of
 *   servers may plan on one database;
 * - the runner (with `run`) is the leased work loop (src/runner/run-loop.ts) over the store's
 *   due runs: it claims them with a lease at every tick, at the due times planned ahead and
 *   once half of its slots are free, at most `concurrency` at a time, keeps their leases while
 *   they run, runs them through src/runner and records their results. It leaves the locations
 *   a live agent serves to that agent. A run whose lease expires (its runner died) is claimed
 *   again; a run whose lease was taken over is aborted and records nothing.
 * Results older than the retention period are pruned.
 * While the database is away (restarting, unreachable, locked, full) both go on trying every
 * tick and resume by themselves; a run that finished meanwhile keeps its result until the
 * database takes it (recorded once: a claim completes once, see RunStore.complete).
 */

export interface SchedulerOptions {
  store: Store
  services: RunServices
  /** plan due runs (default true) */
  plan?: boolean
  /** claim and run due runs (default true) */
  run?: boolean
  /** ms between ticks (default 1000) */
  tickMs?: number
  /** runs in flight at most (default 64: 10,000 checks in 2 locations keep about 20 in flight, more while a restart's backlog drains) */
  concurrency?: number
  /** lease of a claimed run, ms (default 60000); extended while the run lasts */
  leaseMs?: number
  /** results older than this are pruned, ms (default 30 days) */
  retentionMs?: number
  /** ms between prunes (default 1 minute; each prune deletes in small batches) */
  pruneEveryMs?: number
  /** options given to every run (tests shorten the waits) */
  runOptions?: Partial<RunOptions>
  /** where the artifacts of browser and multi-step runs are kept (none: they are discarded) */
  artifacts?: ArtifactStore
  /** called when a claimed run starts, with the scheduler's clock */
  onRunStart?: (run: ClaimedRun, startedAt: number) => void
  /**
   * called after each planning with the due runs this process's insert added and the skipped
   * ones it inserted (maintenance: in a maintenance window; missed: found after the check's
   * grace, or passed while this process could not plan): each run is counted once, by the
   * process whose insert made its row, however many servers plan
   */
  onPlanned?: (planned: number, skipped: SkipCount[]) => void
  /** more of the server's sweeps on the tick's clock, where it plans (the private locations' agent alerts) */
  sweep?: (now: number) => Promise<unknown>
  /** called when the planner read the checks anew, with the check types and locations it schedules */
  onSchedule?: (pairs: Array<{ checkType: string; location: string }>) => void
  /** internal errors of the loop (default: stderr) */
  log?: (line: string) => void
}

/**
 * The account's variables, for the `{{KEY}}` references of an API check, resolved when it runs
 * (secret ones are masked by the runner in everything a run records).
 */
export async function accountVariables(store: Store, account: string): Promise<Record<string, { value: string; secret: boolean }>> {
  const out: Record<string, { value: string; secret: boolean }> = {}
  // read by keyset: each page costs what the first did (a variable deleted while it is a page's last ends the read)
  let page: { items: VariableRecord[]; more: boolean } | null = { ...(await store.variables.list(account, { limit: 1000, offset: 0 })), more: true }
  while (page) {
    for (const v of page.items) out[v.key] = { value: v.value, secret: v.secret }
    if (page.items.length < 1000 || !page.more) break
    page = await store.variables.listAfter(account, page.items[page.items.length - 1].key, 1000)
  }
  return out
}

/**
 * The account's snippets an API check names as its setup and teardown scripts, by id (a
 * snippet deleted since, or another account's, is not there: the run says so). Undefined when
 * it names none.
 */
export async function checkSnippets(store: Store, account: string, check: unknown): Promise<Record<string, { name: string; script: string }> | undefined> {
  const c = check as { setupSnippetId?: unknown; tearDownSnippetId?: unknown }
  const ids = [c.setupSnippetId, c.tearDownSnippetId].filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id))
  if (ids.length === 0) return undefined
  const out: Record<string, { name: string; script: string }> = {}
  for (const record of await store.snippets.byIds(account, [...new Set(ids)]))
    out[String(record.id)] = { name: record.snippet.name, script: record.snippet.script }
  return out
}

/** Due times of one check that passed unplanned, counted as missed at most (a process stopped longer counts the latest). */
const MAX_MISSED_PLANNED = 60

/** Results finishing within this many ms of the first are recorded in one transaction. */
const GROUP_COMMIT_MS = 10
const MAX_GROUP_COMMIT = 256

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** How long runs in flight may finish on stop before they are aborted (and left to their leases). */
const STOP_GRACE_MS = 5000

interface Parsed {
  json: string
  /** the check's group as it was read (its settings are applied to `check`) */
  groupJson?: string
  check: ScheduleFields & { activated?: boolean; checkType?: string; tags?: string[] }
  timing: Timing
  grace: number
  runnable: boolean
  /** resumed (activated again) at this time: due times before it fell while it was paused and are not run */
  notBefore: number
}

/** The group of a check that names one of its account's. */
function groupIn(
  groups: Map<string, { group: CheckGroup; json: string }>,
  row: { account: string; json: string },
): { group: CheckGroup; json: string } | undefined {
  const groupId = (JSON.parse(row.json) as { groupId?: unknown }).groupId
  return typeof groupId === 'number' ? groups.get(`${row.account}\u0000${groupId}`) : undefined
}

export const DEFAULT_RETENTION_DAYS = 30

export class Scheduler {
  readonly owner = `server:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly store: Store
  private readonly services: RunServices
  private readonly options: Required<Pick<SchedulerOptions, 'plan' | 'run' | 'tickMs' | 'concurrency' | 'leaseMs' | 'retentionMs' | 'pruneEveryMs'>> &
    SchedulerOptions
  private timer: NodeJS.Timeout | undefined
  /** ticking on its own timer (start) */
  private started = false
  /** stop() was called: nothing new is claimed or started (a tick called directly works before start) */
  private stopped = false
  private ticking: Promise<void> | undefined
  /** the runner: due runs claimed from the store with a lease */
  private readonly runner: RunLoop<ClaimedRun>
  private lastPrune = -Infinity
  private readonly parsed = new Map<string, Parsed>()
  /** the last due time planned per check (saves the store a write that would be ignored) */
  private readonly planned = new Map<string, number>()
  /** runs this runner completed; for figures */
  completed = 0
  /** the database being away, told once (and its end) */
  private readonly outage: OutageLog

  constructor(options: SchedulerOptions) {
    this.store = options.store
    this.services = options.services
    this.options = {
      plan: true,
      run: true,
      tickMs: 1000,
      concurrency: 64,
      leaseMs: 60_000,
      retentionMs: DEFAULT_RETENTION_DAYS * 86_400_000,
      pruneEveryMs: 60_000,
      ...options,
    }
    this.outage = new OutageLog('scheduler', (line) => this.log(line))
    this.runner = new RunLoop<ClaimedRun>({
      source: this.dueRuns(),
      key: (run) => run.runId,
      concurrency: this.options.concurrency,
      // claims at ticks (fill), at the due times planned ahead (fill), and when half of the slots are free
      pollMs: Infinity,
      // one claim statement per batch, not per run (ticks and planned wake-ups claim too, so a light load does not wait for it)
      refillAt: 0.5,
      // a long run (retries, slow pings) keeps its lease
      extendEveryMs: Math.max(1000, Math.floor(this.options.leaseMs / 3)),
      graceMs: STOP_GRACE_MS,
      backoffMs: () => this.options.tickMs,
      work: (run, signal) => this.runOne(run, signal),
      onClaimError: (error) => {
        if (!this.stopped && !this.outage.failed(error)) this.log(`scheduler: ${(error as Error).message}`)
        return 'retry'
      },
      onWorkError: (run, error) => {
        if (!this.stopped && !this.outage.failed(error)) this.log(`scheduler: run ${run.runId}: ${(error as Error).message}`)
      },
      // the database away: tried again at the next interval, said once by the claims
      onExtendError: () => undefined,
    })
  }

  /** The store's due runs (those of locations no live agent serves) as the runner's source of work. */
  private dueRuns(): WorkSource<ClaimedRun> {
    return {
      claim: (max) => this.claimDue(max),
      extend: async (run) => {
        const until = await this.store.runs.extend(undefined, run.runId, this.options.leaseMs, this.services.now())
        // recorded already by this runner (its result crossed the extension): not lost
        return typeof until === 'number' || until === 'completed'
      },
      // no release: a run claimed while stopping is run (stop waits for it) or left to its lease
    }
  }

  /** Script runs this runner holds (running, or waiting for a place of the script concurrency). */
  private heldScripts = 0

  /**
   * Claims up to `max` due runs, script runs among them only while fewer than twice the script
   * concurrency are held: runs waiting for a script place would otherwise take the runner's
   * slots one by one, and the runs of every other type would wait behind them (a server with
   * more browser checks due than it can run fell behind on its DNS checks). The script runs left
   * are claimed once places free up, or skipped as stale like any run nobody claimed in time.
   */
  private async claimDue(max: number): Promise<ClaimedRun[]> {
    const query = { owner: this.owner, leaseMs: this.options.leaseMs, now: this.services.now(), skipAgentLocations: true }
    const limiter = this.options.runOptions?.script?.limiter
    const room = limiter?.size ? Math.max(0, 2 * limiter.size - this.heldScripts) : undefined
    return claimDueRuns(this.store, this.services, { ...query, max }, room === undefined ? undefined : { checkTypes: SCRIPT_CHECK_TYPES, max: room })
  }

  start(): void {
    if (this.started) return
    this.started = true
    this.stopped = false
    if (this.options.run) this.runner.start()
    this.schedule(0)
  }

  /** Stops ticking; runs in flight finish and are recorded (after 5 s they are aborted, and left to expire). */
  async stop(): Promise<void> {
    this.stopped = true
    this.started = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    for (const timer of this.wakeups) clearTimeout(timer)
    this.wakeups.clear()
    await this.ticking
    await this.runner.stop()
  }

  private schedule(delay: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined
        this.schedule(this.options.tickMs)
      })
    }, delay)
  }

  private log(line: string): void {
    ;(this.options.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line)
  }

  /** One tick: plan, run, prune. Errors (a busy database, a closing store) wait for the next tick. */
  async tick(): Promise<void> {
    try {
      const now = this.services.now()
      if (this.options.plan) await this.planDue(now)
      // heartbeat checks whose period and grace ended without a ping fail (once per period, any process)
      if (this.options.plan) await sweepHeartbeats(this.store, now)
      if (this.options.plan && this.options.sweep) await this.options.sweep(now)
      if (this.options.run) await this.fill()
      if (now - this.lastPrune >= this.options.pruneEveryMs) {
        this.lastPrune = now
        await this.prune(now)
      }
      this.outage.ok()
    } catch (error) {
      // the database away: said once, tried again next tick
      if (!this.stopped && !this.outage.failed(error)) this.log(`scheduler: ${(error as Error).message}`)
    }
  }

  /** The checks and windows of the schedule's last version read (re-read only when it moves). */
  private scheduleVersion: string | undefined
  private checks: Array<{ id: string; account: string; entry: Parsed }> = []
  private windowsOf = new Map<string, MaintenanceWindow[]>()

  private async readSchedule(now: number): Promise<void> {
    const version = await this.store.schedule.scheduleVersion()
    if (version === this.scheduleVersion) return
    const [checks, windows, groups] = await Promise.all([
      this.store.schedule.allChecks(),
      this.store.schedule.allMaintenanceWindows(),
      this.store.schedule.allCheckGroups(),
    ])
    // a check in a group is planned with the group's locations, activated and muted
    const groupOf = new Map<string, { group: CheckGroup; json: string }>()
    for (const { account, id, group } of groups) groupOf.set(`${account}\u0000${id}`, { group, json: JSON.stringify(group) })
    const windowsOf = new Map<string, MaintenanceWindow[]>()
    for (const { account, window } of windows) {
      const list = windowsOf.get(account) ?? []
      list.push(window)
      windowsOf.set(account, list)
    }
    const list: Array<{ id: string; account: string; entry: Parsed }> = []
    const seen = new Set<string>()
    for (const row of checks) {
      seen.add(row.id)
      let entry = this.parsed.get(row.id)
      const grouped = row.json.includes('"groupId":') ? groupIn(groupOf, row) : undefined
      if (!entry || entry.json !== row.json || entry.groupJson !== grouped?.json) {
        const own = JSON.parse(row.json) as Parsed['check']
        const check = grouped ? (applyGroup(own as unknown as Record<string, unknown>, grouped.group) as unknown as Parsed['check']) : own
        const runnable = check.activated !== false && isRunnableCheckType(check.checkType)
        // seen paused and now resumed: no catching up on the due times it was paused for
        const resumed = entry !== undefined && entry.check.activated === false && check.activated !== false
        const notBefore = resumed ? now : (entry?.notBefore ?? -Infinity)
        entry = { json: row.json, groupJson: grouped?.json, check, timing: timingOf(check), grace: graceMs(check), runnable, notBefore }
        this.parsed.set(row.id, entry)
      }
      list.push({ id: row.id, account: row.account, entry })
    }
    for (const id of this.parsed.keys()) {
      if (!seen.has(id)) {
        this.parsed.delete(id)
        this.planned.delete(id)
      }
    }
    this.checks = list
    this.windowsOf = windowsOf
    this.scheduleVersion = version
    this.options.onSchedule?.(schedulePairs(list))
  }

  /**
   * Writes the due runs of every activated check at `now` (see due.ts for the times), and as
   * skipped the ones not to run: covered by a maintenance window, found after the check's grace,
   * or passed while this process could not plan (the database away, the process stalled).
   */
  async planDue(now: number): Promise<number> {
    await this.readSchedule(now)
    const runs: PlannedRun[] = []
    // with a runner here, runs due before the next tick are planned now and started on time
    const horizon = now + (this.options.run ? this.options.tickMs : 0)
    const wakeups = new Set<number>()
    const planned = new Map<string, number>()
    const idle = await this.idlePrivateLocations(now)
    for (const { id, account, entry } of this.checks) {
      if (!entry.runnable) continue
      const { index, dueAt } = latestDueOf(entry.timing, horizon)
      if (dueAt < entry.notBefore || this.planned.get(id) === dueAt) continue
      const check = entry.check
      const add = (k: number, skipReason?: PlannedRun['skipReason']) => {
        const at = k * entry.timing.period + entry.timing.phase
        for (const location of locationsFor(check, k)) {
          // a private location with no agent alive: nobody would run it
          const reason = skipReason ?? (idle.has(`${account}\u0000${location}`) ? 'no-agent' : undefined)
          runs.push({
            key: `schedule:${id}:${location}:${at}`,
            account,
            checkId: id,
            location,
            dueAt: at,
            sessionId: null,
            staleAt: at + entry.grace,
            skipReason: reason,
          })
        }
      }
      const seen = this.planned.has(id)
      for (const k of this.passedUnplanned(id, entry, index)) add(k, 'missed')
      planned.set(id, dueAt)
      if (dueAt <= now - entry.grace) {
        // found too late to run (the server was down or stalled): counted, never run (not on a
        // first sight: a check created since may never have been due then)
        if (seen) add(index, 'missed')
        continue
      }
      if (inMaintenance(check.tags ?? [], this.windowsOf.get(account) ?? [], dueAt)) {
        add(index, 'maintenance')
        continue
      }
      if (dueAt > now) wakeups.add(Math.ceil(dueAt / 10) * 10)
      add(index)
    }
    const outcome = await this.store.runs.plan(runs)
    // remembered once written: a write that failed (a busy database) is tried again next tick
    for (const [id, dueAt] of planned) this.planned.set(id, dueAt)
    for (const at of wakeups) this.wakeAt(at - now)
    this.options.onPlanned?.(outcome.added, outcome.skipped)
    return outcome.added
  }

  /** The private locations (`account\u0000slug`) where no agent is alive at `now`: their runs are skipped as `no-agent`. */
  private async idlePrivateLocations(now: number): Promise<Set<string>> {
    if (!this.checks.some(({ entry }) => (entry.check.privateLocations?.length ?? 0) > 0)) return new Set()
    return new Set((await this.store.privateLocations.load(now)).filter((l) => l.agents === 0).map((l) => `${l.account}\u0000${l.slugName}`))
  }

  /**
   * The due indexes of a check after the last one this process planned and before `index`: due
   * times that passed while it could not plan (at most MAX_MISSED_PLANNED, the latest; none when
   * the check's timing changed since).
   */
  private passedUnplanned(id: string, entry: Parsed, index: number): number[] {
    const last = this.planned.get(id)
    if (last === undefined) return []
    const from = (last - entry.timing.phase) / entry.timing.period
    if (!Number.isInteger(from)) return []
    const out: number[] = []
    for (let k = Math.max(from + 1, index - MAX_MISSED_PLANNED); k < index; k++) {
      if (k * entry.timing.period + entry.timing.phase >= entry.notBefore) out.push(k)
    }
    return out
  }

  private readonly wakeups = new Set<NodeJS.Timeout>()

  /** Claims again in `ms` (a run planned ahead falls due then). */
  private wakeAt(ms: number): void {
    if (this.stopped) return
    const timer = setTimeout(() => {
      this.wakeups.delete(timer)
      if (!this.stopped) void this.fill().catch(() => undefined)
    }, ms)
    this.wakeups.add(timer)
  }

  /** Claims due runs while there is room, and starts them. */
  async fill(): Promise<void> {
    await this.runner.fill()
  }

  private async runOne(run: ClaimedRun, signal: AbortSignal): Promise<void> {
    // the planner's parse of the same body, when it has it (the runner does not change a check)
    const planned = this.parsed.get(run.checkId)
    const own = (planned?.json === run.checkJson && planned.groupJson === undefined ? planned.check : JSON.parse(run.checkJson)) as RunnableCheck
    if (!isScriptCheckType(own.checkType)) return this.runChecked(run, own, signal)
    this.heldScripts++
    try {
      return await this.runChecked(run, own, signal)
    } finally {
      this.heldScripts--
    }
  }

  private async runChecked(run: ClaimedRun, own: RunnableCheck, signal: AbortSignal): Promise<void> {
    // a check in a group runs with the group's settings (read now: a group changed applies to this run)
    const check = (await withGroup(this.store, run.account, own as unknown as Record<string, unknown>)) as unknown as RunnableCheck
    this.options.onRunStart?.(run, this.services.now())
    const entry = checkTypeEntry(check.checkType)
    const variables = entry?.variables ? runVariables(await accountVariables(this.store, run.account), check as { environmentVariables?: unknown }) : undefined
    const snippets = entry?.snippets ? await checkSnippets(this.store, run.account, check) : undefined
    const result: CheckRunResult = await runCheck(check, {
      now: this.services.now,
      ...this.options.runOptions,
      location: run.location,
      signal,
      variables,
      snippets,
    })
    const folders = detachRunArtifacts(result)
    try {
      // stopped mid-run: nothing made up is recorded; the lease expires and another runner runs it
      // (its lease taken over: the other runner records it)
      if (signal.aborted) return
      const outcome = await this.record(run, result)
      if (outcome.outcome !== 'completed') return
      this.completed++
      const artifacts = this.options.artifacts
      if (!artifacts) return
      if (folders.final) artifacts.keepFolder(run.account, outcome.final.id, outcome.final.stoppedAt, folders.final)
      outcome.attempts.forEach((a, i) => {
        const dir = folders.attempts[i]
        if (dir) artifacts.keepFolder(run.account, a.id, a.stoppedAt, dir)
      })
    } finally {
      discardFolders(folders)
    }
  }

  /** Results waiting for the next group commit. */
  private pending: Array<{ runId: string; checkId: string; result: CheckRunResult; resolve: (o: CompleteOutcome) => void; reject: (e: unknown) => void }> = []
  /** group commits under way (at most the store's commitConcurrency: SQLite 1) */
  private committers = 0

  /**
   * Records a run's result. Results that finish while a commit is under way, or within
   * GROUP_COMMIT_MS of each other, are recorded together in one transaction; a store that takes
   * several writers (PostgreSQL: every group locks its rows in one order) records several
   * groups at once.
   */
  private record(run: ClaimedRun, result: CheckRunResult): Promise<CompleteOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ runId: run.runId, checkId: run.checkId, result, resolve, reject })
      const size = this.store.maxGroupCommit ?? MAX_GROUP_COMMIT
      // one committer per group waiting, up to the store's concurrency
      if (this.committers < (this.store.commitConcurrency ?? 1) && (this.committers === 0 || this.pending.length > this.committers * size)) {
        this.committers++
        void delay(GROUP_COMMIT_MS).then(() => this.commit())
      }
    })
  }

  /** Records groups until none waits: the committer counts itself out in the step that finds none (so no result is left waiting). */
  private async commit(): Promise<void> {
    for (;;) {
      if (this.pending.length === 0) {
        this.committers--
        return
      }
      await this.commitGroup(this.pending.splice(0, this.store.maxGroupCommit ?? MAX_GROUP_COMMIT))
    }
  }

  /** One group in one transaction; a group the store refuses is recorded one by one. Settles every result's promise, never throws. */
  private async commitGroup(batch: typeof this.pending): Promise<void> {
    let outcomes: CompleteOutcome[] | undefined
    // the database away: the results wait for it (the runs are done; running them again would double them)
    const stopped = () => this.stopped
    try {
      outcomes =
        batch.length === 1
          ? undefined
          : await untilAvailable(
              () =>
                completeRuns(
                  this.store,
                  this.services,
                  batch.map((p) => ({ account: undefined, runId: p.runId, checkId: p.checkId, result: p.result })),
                ),
              stopped,
              { outage: this.outage },
            )
    } catch {
      // one result the store refuses must not take the others with it: one transaction each
    }
    if (outcomes) batch.forEach((p, i) => p.resolve((outcomes as CompleteOutcome[])[i]))
    else {
      for (const p of batch)
        await untilAvailable(() => completeRun(this.store, this.services, undefined, p.runId, p.result), stopped, { outage: this.outage }).then(
          p.resolve,
          p.reject,
        )
    }
  }

  private async prune(now: number): Promise<void> {
    const before = new Date(now - this.options.retentionMs).toISOString()
    await this.store.results.prune(before, now)
    this.options.artifacts?.prune(before)
    // what agents staged for runs whose lease is no longer held (an agent that died mid-run)
    if (this.options.artifacts) await new StagedUploads(this.options.artifacts).sweep(leaseHeld(this.store, now))
    await this.store.checkStatuses.forgetResultsBefore(before)
    await this.store.runs.prune(now - 10 * 60_000, now)
    await this.store.heartbeats.pruneEvents(now - this.options.retentionMs)
    await this.store.analytics.prune(now - this.options.retentionMs, now)
    await this.store.runs.pruneSkipped(now - this.options.retentionMs)
    await this.store.webSessions.prune(now)
  }
}

/** The check types and locations of the runnable checks, each pair once. */
function schedulePairs(checks: ReadonlyArray<{ entry: Parsed }>): Array<{ checkType: string; location: string }> {
  const pairs = new Map<string, { checkType: string; location: string }>()
  for (const { entry } of checks) {
    if (!entry.runnable) continue
    const checkType = String(entry.check.checkType)
    for (const location of checkLocations(entry.check)) pairs.set(`${checkType}\u0000${location}`, { checkType, location })
  }
  return [...pairs.values()]
}

/** When each store last skipped the late runs (ms of its clock): once a second is enough. */
const lastSkip = new WeakMap<Store, number>()
const SKIP_EVERY_MS = 1000

/**
 * Skips the runs a newer due run of their check supersedes (at most once a second per store;
 * counted, and told to `services.onSkipped`), then claims as claimWithLimit does: what the
 * server's runner and the agents' claims do, so that each check keeps its newest due run and
 * the oldest due runs across checks are claimed first.
 */
export async function claimDueRuns(
  store: Store,
  services: RunServices,
  query: ClaimQuery,
  limit?: { checkTypes: readonly string[]; max: number },
): Promise<ClaimedRun[]> {
  const last = lastSkip.get(store)
  if (last === undefined || query.now - last >= SKIP_EVERY_MS || query.now < last) {
    lastSkip.set(store, query.now)
    const skipped = await store.runs.skipLate(query.now)
    if (skipped.length > 0) services.onSkipped?.(skipped)
  }
  return claimWithLimit(store, query, limit)
}

/**
 * Claims up to `query.max` due runs, at most `limit.max` of them of `limit.checkTypes`: the runs
 * of other types for the slots past that, then those, in due order together. The runner's room
 * for script runs, and the one an agent asks for in its claim (`maxOfCheckTypes`).
 */
export async function claimWithLimit(store: Store, query: ClaimQuery, limit?: { checkTypes: readonly string[]; max: number }): Promise<ClaimedRun[]> {
  if (!limit || limit.max >= query.max) return store.runs.claim(query)
  const others = await store.runs.claim({ ...query, max: query.max - limit.max, skipCheckTypes: limit.checkTypes })
  const limited = limit.max > 0 ? await store.runs.claim({ ...query, max: limit.max, onlyCheckTypes: limit.checkTypes }) : []
  return [...others, ...limited].sort((a, b) => a.dueAt - b.dueAt)
}
