import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import pc from 'picocolors'
import { UserError } from '../../errors.js'
import { waitForSession } from '../../api/account.js'
import { listAllByPage } from '../../api/paging.js'
import { redact } from '../../api/redact.js'
import type { ApiClient } from '../../api/client.js'
import { CHECK_KINDS } from '../../resources/registry.js'
import type { DesiredResource } from '../../resources/types.js'
import { groupStages } from '../../schema/check-group.js'
import { lockKey } from '../../state/lock.js'
import { io } from '../io.js'
import { locationLabels } from '../location-names.js'
import { Progress, progressMode } from '../progress.js'
import {
  checkNumber,
  data,
  engineOptions,
  environmentRequest,
  err,
  loadOrReport,
  openSession,
  out,
  setStdoutFormat,
  useColor,
  withEnvironment,
  type EngineArgs,
} from '../engine.js'

interface TriggerArgs extends Omit<EngineArgs, 'format'> {
  checks?: string[]
  tag?: string[]
  group?: string[]
  format?: 'text' | 'json'
  maxWait?: number
}

/** The trigger's own refusals (nothing to run as asked): exit 2, apart from a failing check's 1. */
class TriggerRefusal extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 2 })
  }
}

/** A deployed check to run. */
interface Target {
  id: string
  name: string
  checkType: string
  groupOrder?: number | null
  /** the project's logical id, when the check is the project's */
  logicalId?: string
  /** the group (logical id) it is run as part of */
  group?: string
}

/** One check's session, once finished (or not within the wait). */
export interface TriggerRow {
  target: Target
  sessionId: string | null
  status: 'PASSED' | 'DEGRADED' | 'FAILED' | 'TIMED_OUT' | 'NOT_FINISHED'
  runLocations: string[]
  timeElapsed: number | null
  error: string | null
  stage: number
}

interface Completion {
  status: TriggerRow['status']
  runLocations: string[]
  timeElapsed: number
  results: Array<{ error?: string | null; status?: string; runLocation?: string }>
}

const FAILING = new Set(['FAILED', 'TIMED_OUT', 'NOT_FINISHED'])

/** The checks the arguments name: by logical id (the lock's remote id), by group, by tag. */
async function selectTargets(
  client: ApiClient,
  project: { resources: readonly DesiredResource[] },
  remoteIdOf: (r: DesiredResource) => string | undefined,
  args: TriggerArgs,
) {
  const checks = project.resources.filter((r) => CHECK_KINDS.has(r.kind))
  const logicalIdOf = new Map<string, string>()
  for (const r of checks) {
    const id = remoteIdOf(r)
    if (id !== undefined) logicalIdOf.set(id, r.logicalId)
  }
  const stages: Array<{ label: string; concurrency: number; checks: Target[][] }> = []
  const named: Target[] = []
  const problems: string[] = []

  for (const text of args.checks ?? []) {
    const at = text.indexOf(':')
    const matches = checks.filter((r) =>
      at > 0 ? `${r.kind}:${r.logicalId}` === text || `${String(r.construct)}:${r.logicalId}` === text : r.logicalId === text,
    )
    if (matches.length === 0) {
      problems.push(`${JSON.stringify(text)} names no check of the project (write a check's logical id, or kind:logicalId)`)
      continue
    }
    if (matches.length > 1) {
      problems.push(
        `${JSON.stringify(text)} names ${matches.length} checks (${matches.map((m) => `${m.kind}:${m.logicalId}`).join(', ')}): write kind:logicalId`,
      )
      continue
    }
    const r = matches[0]
    const id = remoteIdOf(r)
    if (id === undefined) {
      problems.push(`${r.kind}:${r.logicalId} is not deployed on this target: run "monitors apply" first`)
      continue
    }
    if (r.payload.checkType === 'HEARTBEAT') {
      problems.push(`${r.kind}:${r.logicalId} is a heartbeat check: it is judged by the pings it receives and cannot be triggered`)
      continue
    }
    named.push({ id, name: String(r.payload.name), checkType: String(r.payload.checkType), logicalId: r.logicalId })
  }

  for (const logicalId of args.group ?? []) {
    const group = project.resources.find((r) => r.kind === 'check-group' && r.logicalId === logicalId)
    if (!group) {
      const known = project.resources.filter((r) => r.kind === 'check-group').map((r) => r.logicalId)
      problems.push(`--group ${JSON.stringify(logicalId)} names no CheckGroup of the project${known.length > 0 ? ` (its groups: ${known.join(', ')})` : ''}`)
      continue
    }
    const id = remoteIdOf(group)
    if (id === undefined) {
      problems.push(`CheckGroup ${JSON.stringify(logicalId)} is not deployed on this target: run "monitors apply" first`)
      continue
    }
    const remote = (await client.get<{ concurrency?: number; activated?: boolean; name?: string }>(`/v1/check-groups/${encodeURIComponent(id)}`)).body
    const members = (
      await listAllByPage<Target & { checkType: string }>(client, `/v1/check-groups/${encodeURIComponent(id)}/checks`, { idOf: (c) => String(c.id) })
    )
      .filter((c) => c.checkType !== 'HEARTBEAT')
      .map((c) => ({
        id: String(c.id),
        name: String(c.name),
        checkType: c.checkType,
        groupOrder: c.groupOrder ?? null,
        logicalId: logicalIdOf.get(String(c.id)),
        group: logicalId,
      }))
    if (members.length === 0) {
      problems.push(`CheckGroup ${JSON.stringify(logicalId)} has no check that can be triggered on this target`)
      continue
    }
    stages.push({ label: `group ${logicalId}`, concurrency: Math.max(1, remote.concurrency ?? 3), checks: groupStages(members) })
  }

  for (const tag of args.tag ?? []) {
    const tagged = (
      await listAllByPage<Target & { checkType: string; tags?: string[] }>(client, '/v1/checks', { query: { tag }, idOf: (c) => String(c.id) })
    ).filter((c) => c.checkType !== 'HEARTBEAT' && (c.tags ?? []).includes(tag))
    if (tagged.length === 0) problems.push(`--tag ${JSON.stringify(tag)}: no check on this target carries it`)
    for (const c of tagged) named.push({ id: String(c.id), name: String(c.name), checkType: c.checkType, logicalId: logicalIdOf.get(String(c.id)) })
  }

  if (problems.length > 0) throw new TriggerRefusal(`Nothing was triggered: ${problems.join('; ')}.`)
  if (named.length === 0 && stages.length === 0) {
    throw new TriggerRefusal('Name what to run: check logical ids, --group <logicalId> or --tag <tag> (e.g. monitors trigger --group smoke).')
  }
  // checks named more than once run once (a group's place wins)
  const inGroups = new Set(stages.flatMap((s) => s.checks.flat().map((c) => c.id)))
  const loose = [...new Map(named.filter((c) => !inGroups.has(c.id)).map((c) => [c.id, c])).values()]
  if (loose.length > 0) stages.unshift({ label: 'checks', concurrency: 100, checks: [loose] })
  return stages
}

/** What runStages says as it goes: a batch of checks started, a check's session finished. */
interface StageEvents {
  started(batch: readonly Target[], label: string): void
  finished(row: TriggerRow): void
}

/** Runs one check after another as `stages` say: each stage's checks at most `concurrency` at a time, waiting for each to finish. */
async function runStages(client: ApiClient, stages: Awaited<ReturnType<typeof selectTargets>>, deadline: number, events: StageEvents): Promise<TriggerRow[]> {
  const rows: TriggerRow[] = []
  let stageNumber = 0
  for (const selection of stages) {
    for (const stage of selection.checks) {
      stageNumber++
      for (let i = 0; i < stage.length; i += selection.concurrency) {
        const batch = stage.slice(i, i + selection.concurrency)
        events.started(batch, selection.label)
        const started = await client.post<{ sessions: Array<{ checkSessionId: string; checkId: string }> }>('/v1/check-sessions/trigger', {
          target: { checkId: batch.map((c) => c.id) },
        })
        const sessionOf = new Map(started.body.sessions.map((s) => [s.checkId, s.checkSessionId]))
        const finished = await Promise.all(
          batch.map(async (target) => {
            const sessionId = sessionOf.get(target.id) ?? null
            const completion = sessionId ? await waitForSession<Completion>(client, sessionId, deadline) : undefined
            const error = completion?.results.find((r) => r.error)?.error ?? null
            const row: TriggerRow = {
              target,
              sessionId,
              status: completion?.status ?? 'NOT_FINISHED',
              runLocations: completion?.runLocations ?? [],
              timeElapsed: completion?.timeElapsed ?? null,
              error: completion ? error : `did not finish within --max-wait`,
              stage: stageNumber,
            }
            events.finished(row)
            return row
          }),
        )
        rows.push(...finished)
      }
    }
  }
  return rows
}

/**
 * The progress of the runs on stderr, as apply's (src/cli/progress.ts): on a terminal one line
 * rewritten in place (checks done of the total, per check type, and which the command is waiting
 * for, for how long), without one a plain line every few seconds, none with --format json. The
 * line of each batch started is printed above it.
 */
function startProgress(stages: Awaited<ReturnType<typeof selectTargets>>, format: string | undefined, client: ApiClient): StageEvents & { stop(): void } {
  const totals = new Map<string, number>()
  for (const selection of stages)
    for (const stage of selection.checks) for (const target of stage) totals.set(target.checkType, (totals.get(target.checkType) ?? 0) + 1)
  const running = new Map<Target, number>()
  const detail = () => {
    if (running.size === 0) return ''
    const since = Math.min(...running.values())
    return `waiting for ${[...running.keys()].map((t) => t.name).join(', ')} (${Math.floor((Date.now() - since) / 1000)} s)`
  }
  const { stderr, env } = io()
  const { mode, intervalMs } = progressMode({ stream: stderr, format, env })
  const progress = new Progress({ verb: 'Triggering', totals: [...totals], stream: stderr, mode, intervalMs, waitMs: () => client.rateLimitWaitMs(), detail })
  const c = pc.createColors(useColor())
  return {
    started: (batch, label) => {
      const now = Date.now()
      for (const target of batch) running.set(target, now)
      progress.around(() => err(`${c.dim(`Running ${batch.map((t) => t.name).join(', ')} (${label})`)}\n`))
    },
    finished: (row) => {
      running.delete(row.target)
      progress.finished(row.target.checkType, !FAILING.has(row.status))
    },
    stop: () => progress.stop(),
  }
}

/**
 * The table of runs, each error whole: its first line in the table, and an error of several
 * lines in full under it; `labelOf` shows a location as people know it (a private location by its
 * name, src/cli/location-names.ts).
 */
export function renderTable(rows: TriggerRow[], color: boolean, labelOf: (location: string) => string = (l) => l): string {
  const c = pc.createColors(color)
  const paint = (status: string) => (status === 'PASSED' ? c.green(status) : status === 'DEGRADED' ? c.yellow(status) : c.red(status))
  const head = ['#', 'Check', 'Type', 'Status', 'Locations', 'Time', 'Error']
  const checkName = (r: TriggerRow) => (r.target.logicalId ? `${r.target.name} (${r.target.logicalId})` : r.target.name)
  const body = rows.map((r) => [
    String(r.stage),
    checkName(r),
    r.target.checkType,
    r.status,
    r.runLocations.map(labelOf).join(', '),
    r.timeElapsed === null ? '' : `${r.timeElapsed} ms`,
    (r.error ?? '').split('\n')[0],
  ])
  // the last column is not padded: a long error does not widen the others
  const widths = head.map((h, i) => (i === head.length - 1 ? 0 : Math.max(h.length, ...body.map((row) => row[i].length))))
  const line = (cells: string[], paintStatus: boolean) =>
    cells
      .map((cell, i) => {
        const padded = cell.padEnd(widths[i])
        return paintStatus && i === 3 ? paint(cell) + ' '.repeat(widths[i] - cell.length) : padded
      })
      .join('  ')
      .trimEnd()
  const long = rows.filter((r) => (r.error ?? '').trim().includes('\n'))
  const details = long
    .map(
      (r) =>
        `\n${checkName(r)}:\n${(r.error as string)
          .trimEnd()
          .split('\n')
          .map((l) => `  ${l}`)
          .join('\n')}\n`,
    )
    .join('')
  return `${[c.bold(line(head, false)), ...body.map((row) => line(row, true))].join('\n')}\n${details}`
}

/**
 * `monitors trigger`: runs deployed checks on the target now (check sessions), by logical id,
 * --group (in the group's groupOrder, its concurrency at a time) or --tag, waits for them and
 * prints a table or JSON. Exit 0 when every run passed (or was degraded), 1 when one failed, timed
 * out or did not finish within --max-wait, 2 when the arguments name nothing that can run.
 */
export const triggerCommand = {
  command: 'trigger [checks..]',
  describe: 'Run deployed checks on the target now (by logical id, --group or --tag), wait for their results, exit 1 when one fails',
  builder: (yargs: Argv) =>
    engineOptions(yargs)
      .positional('checks', { type: 'string', array: true, describe: "Logical ids of the project's checks (or kind:logicalId)" })
      .option('group', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: "A CheckGroup's logical id: its checks run in groupOrder, the group's concurrency at a time; repeatable",
      })
      .option('tag', { type: 'string', array: true, requiresArg: true, describe: 'Every check on the target carrying this tag; repeatable' })
      .option('max-wait', {
        type: 'number',
        default: 600,
        requiresArg: true,
        coerce: checkNumber('--max-wait', 'a number of seconds from 1 to 3600, e.g. 300', (n) => n >= 1 && n <= 3600),
        describe: 'Seconds to wait for all the runs to finish; a run not finished by then counts as failed',
      })
      .option('format', {
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'Output: a table, or json (one document) on stdout with the table on stderr',
      }),
  handler: async (args: ArgumentsCamelCase<TriggerArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    const environment = environmentRequest(args)?.name || undefined
    const fail = (message: string) => {
      if (args.format === 'json') data(`${JSON.stringify(withEnvironment({ formatVersion: 1, ok: false, error: redact(message) }, environment), null, 2)}\n`)
    }
    const project = await loadOrReport({ config: args.config, env: args.env }, { warn: false })
    if (!project) {
      fail('The project has problems (see stderr).')
      return 1
    }
    try {
      const session = await openSession(project, args as EngineArgs)
      try {
        const { client } = session.open
        const remoteIdOf = (r: DesiredResource) => session.lock?.resources[lockKey(r.kind, r.logicalId)]?.remoteId
        const stages = await selectTargets(client, project, remoteIdOf, args)
        const deadline = Date.now() + (args.maxWait ?? 600) * 1000
        const c = pc.createColors(useColor())
        const progress = startProgress(stages, args.format, client)
        const rows = await runStages(client, stages, deadline, progress).finally(() => progress.stop())
        out(
          renderTable(
            rows,
            useColor(),
            await locationLabels(
              client,
              rows.flatMap((r) => r.runLocations),
            ),
          ),
        )
        const failed = rows.filter((r) => FAILING.has(r.status))
        const summary = `${rows.length - failed.length} of ${rows.length} passed${failed.length > 0 ? `; failing: ${failed.map((r) => r.target.logicalId ?? r.target.name).join(', ')}` : ''}.`
        out(`\n${failed.length > 0 ? c.red('Trigger:') : c.green('Trigger:')} ${summary}\n`)
        if (args.format === 'json') {
          data(
            `${JSON.stringify(
              withEnvironment(
                {
                  formatVersion: 1,
                  ok: failed.length === 0,
                  results: rows.map((r) => ({
                    order: r.stage,
                    checkId: r.target.id,
                    logicalId: r.target.logicalId ?? null,
                    name: r.target.name,
                    checkType: r.target.checkType,
                    group: r.target.group ?? null,
                    groupOrder: r.target.groupOrder ?? null,
                    checkSessionId: r.sessionId,
                    status: r.status,
                    runLocations: r.runLocations,
                    timeElapsed: r.timeElapsed,
                    error: r.error,
                  })),
                },
                project.config.environment?.name,
              ),
              null,
              2,
            )}\n`,
          )
        }
        return failed.length > 0 ? 1 : 0
      } finally {
        await session.close()
      }
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error))
      throw error
    }
  },
} as unknown as CommandModule<object, TriggerArgs>
