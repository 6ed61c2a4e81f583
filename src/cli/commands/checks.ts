import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { consoleOptions, limitOf, listOptions, moreNote, ms, runConsole, when, type Console, type ConsoleArgs, type ListArgs } from '../console.js'
import { fields, note, stateColor, table, title, type Column, type View } from '../view.js'
import {
  checkAnalytics,
  checkErrorGroups,
  checkStatus,
  checkStatuses,
  getCheck,
  listChecks,
  listResults,
  QUICK_RANGES,
  resultError,
  resultStatus,
  RUN_STATES,
  runState,
  type CheckResult,
  type CheckStatus,
  type ErrorGroup,
  type QuickRange,
  type RemoteCheck,
  type RunState,
} from '../../api/account.js'
import type { ApiClient } from '../../api/client.js'
import { CHECK_TYPES } from '../../schema/enums.js'
import { checkTypeEntry } from '../../schema/check-types.js'
import { UserError } from '../../errors.js'

interface ChecksArgs extends ConsoleArgs, ListArgs {
  action: 'list' | 'get'
  id?: string
  tag?: string[]
  type?: string
  status?: RunState
  search?: string
  range: QuickRange
  results: number
}

const RANGE_ALIASES: Record<string, QuickRange> = { '24h': 'last24Hours', '7d': 'last7Days', '30d': 'last30Days' }
const RANGE_WORDS: Record<QuickRange, string> = {
  last24Hours: 'the last 24 hours',
  last7Days: 'the last 7 days',
  last30Days: 'the last 30 days',
  thisWeek: 'this week',
  thisMonth: 'this month',
  lastWeek: 'last week',
  lastMonth: 'last month',
}

/** Every check of the target, as candidates for an id's start. */
export const checkCandidates = (client: ApiClient) => async () =>
  (await listChecks(client, {}, Infinity)).items.map((c) => ({ id: String(c.id), label: JSON.stringify(c.name) }))

/** What a check's STATUS column says: paused when deactivated, else its newest run's state, `no runs` before the first. */
export function checkState(check: RemoteCheck, status: CheckStatus | undefined): string {
  return check.activated === false ? 'paused' : (runState(status) ?? 'no runs')
}

/** The results table of `checks get` and `results CHECK`: newest first, each error's first line. */
export function resultColumns(): Column<CheckResult>[] {
  return [
    { head: 'STATUS', value: resultStatus, paint: (r) => stateColor(resultStatus(r)) },
    { head: 'STARTED (UTC)', value: (r) => when(r.startedAt ?? r.created_at) },
    { head: 'LOCATION', value: (r) => r.runLocation ?? '-', optional: true },
    { head: 'TIME', value: (r) => ms(r.responseTime), right: true, optional: true },
    { head: 'ID', value: (r) => String(r.id), id: true },
    { head: 'ERROR', value: (r) => (resultError(r) ?? '').split('\n')[0], shrink: true },
  ]
}

export const resultJson = (r: CheckResult) => ({ ...r, status: resultStatus(r), error: resultError(r) })

async function listView(c: Console, args: ChecksArgs): Promise<View> {
  const tags = args.tag ?? []
  const search = args.search?.toLowerCase()
  const statuses = await checkStatuses(c.client)
  // the server filters by type, tag and search; each is applied here too (a server without one answers every check), and --status only here
  const filtered = args.type !== undefined || tags.length > 0 || search !== undefined || args.status !== undefined
  const keep = (check: RemoteCheck) =>
    (args.type === undefined || check.checkType === args.type) &&
    (tags.length === 0 || tags.some((t) => (check.tags ?? []).includes(t))) &&
    (search === undefined || String(check.name).toLowerCase().includes(search)) &&
    (args.status === undefined || runState(statuses.get(String(check.id))) === args.status)
  const slice = await listChecks(
    c.client,
    { checkType: args.type, tag: tags.length > 0 ? tags : undefined, search: args.search },
    limitOf(args),
    filtered ? keep : undefined,
  )
  const logical = c.logicalIds()
  const rows = slice.items.map((check) => ({ check, status: statuses.get(String(check.id)), logicalId: logical.get(String(check.id)) ?? null }))
  const columns: Column<(typeof rows)[number]>[] = [
    { head: 'STATUS', value: (r) => checkState(r.check, r.status), paint: (r) => stateColor(checkState(r.check, r.status)) },
    { head: 'NAME', value: (r) => String(r.check.name), shrink: true },
    { head: 'TYPE', value: (r) => r.check.checkType },
    { head: 'ID', value: (r) => String(r.check.id), id: true },
    { head: 'LOGICAL ID', value: (r) => r.logicalId ?? '-', shrink: true, optional: true },
    { head: 'TAGS', value: (r) => (r.check.tags ?? []).join(',') || '-', shrink: true, optional: true },
  ]
  const more = moreNote(rows.length, 'checks', slice)
  return {
    blocks: [table(columns, rows, { empty: filtered ? 'No check matches.' : 'No checks on the target.' }), ...(more ? [note(more)] : [])],
    json: {
      checks: rows.map((r) => ({
        id: r.check.id,
        name: r.check.name,
        checkType: r.check.checkType,
        activated: r.check.activated !== false,
        muted: r.check.muted === true,
        tags: r.check.tags ?? [],
        frequency: r.check.frequency ?? null,
        locations: r.check.locations ?? [],
        groupId: r.check.groupId ?? null,
        logicalId: r.logicalId,
        status: runState(r.status) ?? null,
        lastRunLocation: r.status?.lastRunLocation ?? null,
        lastRunAt: r.status?.updated_at ?? r.status?.created_at ?? null,
      })),
      total: slice.total ?? null,
      more: slice.more,
    },
  }
}

/** The analytics metrics `checks get` shows: availability, and the type's response time (average, p95). */
function analyticsOf(checkType: string): { route: string; metrics: string[]; time: string | null } | undefined {
  const entry = checkTypeEntry(checkType)
  if (!entry) return undefined
  const time = entry.timeMetric
  return { route: entry.analyticsRoute, metrics: ['availability', ...(time ? [`${time}_avg`, `${time}_p95`] : [])], time }
}

const percent = (n: number | null | undefined) => (typeof n === 'number' ? `${Math.round(n * 100) / 100}%` : '-')

async function getView(c: Console, args: ChecksArgs, text: string): Promise<View> {
  const id = await c.checkId(text, checkCandidates(c.client))
  const check = await getCheck(c.client, id)
  const figures = analyticsOf(check.checkType)
  const [status, results, groups, analytics] = await Promise.all([
    checkStatus(c.client, id),
    listResults(c.client, id, {}, args.results),
    checkErrorGroups(c.client, id, 10),
    figures ? checkAnalytics(c.client, figures.route, id, args.range, figures.metrics) : Promise.resolve(undefined),
  ])
  const logicalId = c.logicalIds().get(id)
  const state = checkState(check, status)
  const groupColumns: Column<ErrorGroup>[] = [
    { head: 'LAST SEEN (UTC)', value: (g) => when(g.lastSeen) },
    { head: 'FIRST SEEN (UTC)', value: (g) => when(g.firstSeen), optional: true },
    { head: 'ARCHIVED', value: (g) => (g.archiveForEver ? 'for ever' : g.archivedUntilNextEvent ? 'until next' : 'no'), optional: true },
    { head: 'ERROR', value: (g) => g.cleanedErrorMessage ?? g.rawErrorMessage ?? '', shrink: true },
  ]
  const time = figures?.time
  return {
    blocks: [
      title(`Check ${JSON.stringify(check.name)}${logicalId ? ` (${logicalId})` : ''}`),
      fields([
        ['ID', String(check.id)],
        ['Type', check.checkType],
        ['Status', status ? `${state}: newest run ${when(status.updated_at ?? status.created_at)} UTC in ${status.lastRunLocation ?? '?'}` : state],
        ['Activated', check.activated === false ? 'no (paused)' : 'yes'],
        ['Muted', check.muted ? 'yes' : undefined],
        ['Frequency', typeof check.frequency === 'number' ? (check.frequency === 0 ? 'sub-minute' : `every ${check.frequency} min`) : undefined],
        ['Locations', (check.locations ?? []).join(', ') || undefined],
        ['Tags', (check.tags ?? []).join(', ') || undefined],
      ]),
      title(`Analytics of ${RANGE_WORDS[args.range]}`),
      fields(
        analytics
          ? [
              ['Availability', percent(analytics.availability)],
              ...(time ? [['Response time', `${ms(analytics[`${time}_avg`])} average, ${ms(analytics[`${time}_p95`])} p95`] as [string, string]] : []),
            ]
          : [['Availability', 'the target has no analytics for this check']],
      ),
      table(resultColumns(), results.items, { title: 'Last results', empty: 'No results yet.' }),
      table(groupColumns, groups.items, { title: 'Error groups', empty: 'No error groups.' }),
      note(`A result's details, logs and assets: monitors results ${text} <result id>.`),
    ],
    json: {
      check: { ...check, logicalId: logicalId ?? null },
      status: status ?? null,
      state,
      analytics: analytics ? { range: args.range, ...analytics } : null,
      results: results.items.map(resultJson),
      errorGroups: groups.items,
    },
  }
}

/**
 * `monitors checks list|get`: the target's checks and their statuses (GET /v1/checks, GET
 * /v1/check-statuses), and one check with its status, last results, error groups and analytics
 * (GET /v1/checks/{id}, /v1/check-statuses/{id}, /v1/check-results/{id}, /v1/error-groups/checks/{id},
 * /v1/analytics/<type>/{id}). A check is named by the project's logical id (the lock), its id or
 * the start of its id. docs/commands.md.
 */
export const checksCommand: Command<ChecksArgs> = {
  command: 'checks <action> [id]',
  describe: "List the target's checks and their status (--tag, --type, --status, --search), or show one: status, last results, error groups, analytics",
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'checks')
      .positional('action', { choices: ['list', 'get'] as const, describe: 'list the checks, or get one' })
      .positional('id', {
        type: 'string',
        describe: "get: the check's logical id in the project (shop-dns, dns-check:shop-dns), its id, or the start of its id",
      })
      .option('tag', { type: 'string', array: true, requiresArg: true, describe: 'list: checks carrying this tag (any of them, when repeated)' })
      .option('type', { choices: CHECK_TYPES, describe: 'list: checks of this type' })
      .option('status', { choices: RUN_STATES, describe: 'list: checks whose newest run is passing, failing or degraded' })
      .option('search', { type: 'string', requiresArg: true, describe: 'list: checks whose name contains this (any case)' })
      .option('range', {
        choices: [...QUICK_RANGES, ...Object.keys(RANGE_ALIASES)],
        default: 'last24Hours',
        coerce: (r: string) => RANGE_ALIASES[r] ?? r,
        describe: 'get: the window of the analytics (24h, 7d, 30d are last24Hours, last7Days, last30Days)',
      })
      .option('results', {
        type: 'number',
        default: 5,
        coerce: (n: number) => {
          if (!Number.isInteger(n) || n < 1 || n > 100) throw new UserError(`--results must be a whole number from 1 to 100 (got ${n}).`)
          return n
        },
        describe: 'get: how many of the last results to show',
      })
      .example('$0 checks list --status failing', 'what fails now')
      .example('$0 checks list --tag production --type API --format json', 'for a program')
      .example(
        '$0 checks get shop-dns --range 7d',
        "a check of the project by its logical id: status, last results, error groups, a week's analytics",
      ) as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      if (args.action === 'get' && !args.id)
        throw new UserError('monitors checks get needs a check: its logical id, its id or the start of its id (monitors checks list shows them).')
      if (args.action === 'list' && args.id !== undefined)
        throw new UserError(`monitors checks list takes no id (got ${JSON.stringify(args.id)}): to show one check, monitors checks get ${args.id}.`)
      c.show(args.action === 'list' ? await listView(c, args) : await getView(c, args, args.id as string))
    }),
}
