import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, join, normalize, relative, resolve } from 'node:path'
import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import {
  consoleOptions,
  limitOf,
  listOptions,
  moreNote,
  ms,
  parseWhen,
  runConsole,
  when,
  wholeId,
  type Console,
  type ConsoleArgs,
  type ListArgs,
} from '../console.js'
import { fields, lines, note, table, title, type Column, type View } from '../view.js'
import { checkCandidates, resultColumns, resultJson } from './checks.js'
import {
  downloadAsset,
  getCheck,
  getResult,
  listResults,
  resultAssertions,
  resultAssets,
  resultError,
  resultLogs,
  resultStatus,
  resultTimings,
  type Asset,
  type CheckResult,
} from '../../api/account.js'
import { io } from '../io.js'
import { err } from '../engine.js'
import { UserError } from '../../errors.js'

interface ResultsArgs extends ConsoleArgs, ListArgs {
  check: string
  result?: string
  from?: string
  to?: string
  location?: string
  failed?: boolean
  download?: string
}

/** The query of GET /v1/check-results/{checkId} (the reference's names: from and to in UNIX seconds, location, hasFailures). */
function resultQuery(args: ResultsArgs, now: number) {
  const from = args.from !== undefined ? parseWhen('--from', args.from, now) : undefined
  const to = args.to !== undefined ? parseWhen('--to', args.to, now) : undefined
  if (from !== undefined && to !== undefined && !(from < to)) throw new UserError(`--from must be before --to (got ${args.from} and ${args.to}).`)
  const seconds = (t: number | undefined) => (t === undefined ? undefined : Math.floor(t / 1000))
  const query = { from: seconds(from), to: seconds(to), location: args.location, ...(args.failed ? { hasFailures: true } : {}) }
  // the same, read here: a server without these filters answers every result
  const keep = (r: CheckResult) => {
    const time = Date.parse(r.startedAt ?? r.created_at ?? '')
    return (
      (from === undefined || !(time < from)) &&
      (to === undefined || time < to) &&
      (args.location === undefined || r.runLocation === args.location) &&
      (!args.failed || r.hasFailures || r.hasErrors)
    )
  }
  const filtered = from !== undefined || to !== undefined || args.location !== undefined || args.failed === true
  return { query, keep: filtered ? keep : undefined }
}

const size = (bytes: number | undefined) =>
  typeof bytes !== 'number'
    ? '-'
    : bytes < 1024
      ? `${bytes} B`
      : bytes < 1048576
        ? `${Math.round(bytes / 102.4) / 10} KiB`
        : `${Math.round(bytes / 104857.6) / 10} MiB`

function resultView(result: CheckResult, checkName: string, assets: Asset[], checkText: string, downloading: boolean): View {
  const timings = resultTimings(result)
  const details = result.result?.details
  const assetColumns: Column<Asset>[] = [
    { head: 'TYPE', value: (a) => a.type },
    { head: 'NAME', value: (a) => a.name, shrink: true },
    { head: 'SIZE', value: (a) => size(a.bytes), right: true },
  ]
  const error = resultError(result)
  return {
    blocks: [
      title(`Result ${result.id} of ${JSON.stringify(checkName)}`),
      fields([
        ['Status', `${resultStatus(result)}${result.hasErrors ? ' (an error of the run)' : ''}`],
        ['Check', result.checkId],
        ['Location', result.runLocation],
        ['Started', `${when(result.startedAt)} UTC`],
        ['Stopped', result.stoppedAt ? `${when(result.stoppedAt)} UTC` : undefined],
        ['Response time', ms(result.responseTime)],
        ['Type', result.resultType],
        [
          'Attempt',
          typeof result.result?.attempt === 'number' ? String(result.result.attempt) : result.attempts !== undefined ? String(result.attempts) : undefined,
        ],
        ['Session', result.checkSessionId ?? undefined],
        ['Details', typeof details?.kind === 'string' ? details.kind : undefined],
      ]),
      lines('Error', error ? error.split('\n') : []),
      lines(
        'Assertions',
        resultAssertions(result).map((a) => `${a.passed ? '✓' : '✗'} ${a.message}`),
      ),
      lines(
        'Timings',
        timings
          ? [
              Object.entries(timings)
                .map(([k, v]) => `${k} ${ms(v)}`)
                .join(', '),
            ]
          : [],
      ),
      lines('Logs', resultLogs(result)),
      table(assetColumns, assets, { title: 'Assets', empty: 'No assets (screenshots, traces and logs are kept for browser, multi-step and Playwright runs).' }),
      ...(assets.length > 0 && !downloading ? [note(`Download them: monitors results ${checkText} ${result.id} --download DIR`)] : []),
    ],
    json: { result: resultJson(result), assets, logs: resultLogs(result), timings: timings ?? null },
  }
}

/** A name of the manifest as a path inside `dir`, or undefined when it would leave it. */
function inside(dir: string, name: string): string | undefined {
  const path = normalize(name.replace(/\\/g, '/'))
  if (path === '' || isAbsolute(path) || path.split('/').includes('..')) return undefined
  return join(dir, path)
}

/** Writes the result's assets, its JSON and its logs into `dir`; the files written, relative to the working directory. */
async function download(c: Console, result: CheckResult, assets: Asset[], dir: string): Promise<Array<{ file: string; asset?: Asset }>> {
  const root = resolve(io().cwd, dir)
  mkdirSync(root, { recursive: true })
  // a path below the working directory as such, any other whole
  const shown = (file: string) => {
    const path = relative(io().cwd, file)
    return path === '' || path.startsWith('..') || isAbsolute(path) ? file : path
  }
  const written: Array<{ file: string; asset?: Asset }> = []
  const put = (file: string, content: string | Buffer, asset?: Asset) => {
    mkdirSync(dirname(file), { recursive: true })
    // a result's files are the account's: readable by this user alone
    writeFileSync(file, content, { mode: 0o600 })
    chmodSync(file, 0o600)
    written.push({ file: shown(file), ...(asset ? { asset } : {}) })
  }
  for (const asset of assets) {
    const file = inside(root, asset.name)
    if (!file) {
      err(`Skipped the asset ${JSON.stringify(asset.name)}: its name would leave ${shown(root)}.\n`)
      continue
    }
    put(file, await downloadAsset(c.client, asset), asset)
  }
  put(join(root, 'result.json'), `${JSON.stringify(resultJson(result), null, 2)}\n`)
  const logs = resultLogs(result)
  if (logs.length > 0) put(join(root, 'logs.txt'), `${logs.join('\n')}\n`)
  return written
}

/** The result `text` names: `latest` (with --failed, the newest failing), a whole id or its start among the newest 100. */
async function resultId(c: Console, checkId: string, text: string, args: ResultsArgs): Promise<string> {
  const { query, keep } = resultQuery(args, Date.now())
  if (text === 'latest') {
    const newest = (await listResults(c.client, checkId, query, 1, keep)).items[0]
    if (!newest) throw new UserError(`The check has no ${args.failed ? 'failing ' : ''}result${args.from || args.to ? ' in that window' : ''} yet.`)
    return String(newest.id)
  }
  return wholeId(text, 'result', async () =>
    (await listResults(c.client, checkId, query, 100, keep)).items.map((r) => ({ id: String(r.id), label: `${when(r.startedAt)} ${resultStatus(r)}` })),
  )
}

async function run(c: Console, args: ResultsArgs): Promise<void> {
  const checkId = await c.checkId(args.check, checkCandidates(c.client))
  if (args.result === undefined) {
    if (args.download !== undefined)
      throw new UserError('--download needs a result: monitors results CHECK RESULT --download DIR (RESULT: its id, the start of it, or latest).')
    const { query, keep } = resultQuery(args, Date.now())
    const slice = await listResults(c.client, checkId, query, limitOf(args), keep)
    const more = moreNote(slice.items.length, 'results', slice)
    c.show({
      blocks: [table(resultColumns(), slice.items, { empty: 'No results.' }), ...(more ? [note(more)] : [])],
      json: { checkId, results: slice.items.map(resultJson), total: slice.total ?? null, more: slice.more },
    })
    return
  }
  const id = await resultId(c, checkId, args.result, args)
  const [result, check] = await Promise.all([getResult(c.client, checkId, id), getCheck(c.client, checkId)])
  const assets = await resultAssets(c.client, checkId, id)
  const view = resultView(result, String(check.name), assets, args.check, args.download !== undefined)
  if (args.download !== undefined) {
    const written = await download(c, result, assets, args.download)
    const traces = written.filter((w) => w.asset?.type === 'trace' && /\.zip$/i.test(w.file))
    view.blocks.push(
      lines(
        'Downloaded',
        written.map((w) => w.file),
      ),
      ...traces.map((t) => note(`Open the trace: npx playwright show-trace ${t.file}`)),
    )
    view.json.downloaded = written.map((w) => w.file)
  }
  c.show(view)
}

/**
 * `monitors results CHECK [RESULT]`: a check's results (GET /v1/check-results/{checkId}, newest
 * first, --from/--to/--location/--failed), or one with its details, logs, timings and assets
 * (GET …/{resultId} and …/assets); `--download DIR` writes its assets, its JSON and its logs.
 */
export const resultsCommand: Command<ResultsArgs> = {
  command: 'results <check> [result]',
  describe: "Show a check's results, or one result: its error, details, logs, timings and assets (--download DIR writes them)",
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'results', 20)
      .positional('check', { type: 'string', describe: 'The check: its logical id in the project, its id, or the start of its id' })
      .positional('result', { type: 'string', describe: 'A result: its id, the start of it (as the list shows it), or latest' })
      .option('from', { type: 'string', requiresArg: true, describe: 'Results from this time: ISO date-time, UNIX seconds, or a time ago (6h, 2d)' })
      .option('to', { type: 'string', requiresArg: true, describe: 'Results before this time (as --from)' })
      .option('location', { type: 'string', requiresArg: true, describe: 'Results of this location (eu-west-1)' })
      .option('failed', { type: 'boolean', describe: 'Only results with failures (with latest: the newest failing one)' })
      .option('download', {
        type: 'string',
        requiresArg: true,
        describe: 'With a result: write its screenshots, traces and logs (and result.json) into this folder',
      })
      .example('$0 results shop-dns --failed --from 6h', 'the failing runs of the last 6 hours')
      .example('$0 results checkout latest --failed --download ./failure', "the newest failure's screenshots, trace and logs") as never,
  handler: (args) => runConsole(args, (c) => run(c, args)),
}
