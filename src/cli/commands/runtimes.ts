import { resolve } from 'node:path'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { io } from '../io.js'
import { UserError } from '../../errors.js'
import { DEFAULT_RUNTIME_ID, findRuntime, RUNTIMES } from '../../schema/runtimes.js'
import { defaultRuntimeCache, prepareCommand, prepareRuntime, runtimeRefusal, runtimeStates, type RuntimeState } from '../../runner/script/runtimes.js'

interface RuntimesArgs {
  action?: string
  ids?: string[]
  cacheDir?: string
  format: 'text' | 'json'
  offline: boolean
  fromLock?: string
  force: boolean
}

const ACTIONS = ['list', 'prepare']

/** A runtime's state in a word or three: prepared, not prepared, outdated, removed. */
function stateWord(state: RuntimeState): string {
  if (state.prepared) return 'prepared'
  if (state.stage === 'REMOVED') return 'removed (cannot run)'
  if (state.missing?.includes('other packages')) return 'outdated (prepare again)'
  return 'not prepared'
}

/** `monitors runtimes`: every runtime, its stage, whether it is prepared in the cache folder (and why not), its folder. */
function list(cacheDir: string, format: 'text' | 'json'): number {
  const states = runtimeStates(cacheDir)
  const out = (line: string) => io().stdout.write(`${line}\n`)
  if (format === 'json') {
    const runtimes = states.map((s) => ({
      id: s.id,
      stage: s.stage,
      prepared: s.prepared,
      dir: s.dir,
      missing: s.stage === 'REMOVED' ? runtimeRefusal(s.id) : s.missing,
      prepareCommand:
        s.prepared || s.stage === 'REMOVED' ? null : `${prepareCommand(s.id, cacheDir)}${s.missing?.includes('other packages') ? ' --force' : ''}`,
      runtimeEndOfLife: findRuntime(s.id)?.runtimeEndOfLife ?? null,
    }))
    out(JSON.stringify({ formatVersion: 1, cacheDir, defaultRuntimeId: DEFAULT_RUNTIME_ID, runtimes }, null, 2))
    return 0
  }
  out(`Runtimes in ${cacheDir}:`)
  const rows = [
    ['Runtime', 'Stage', 'State', 'Folder'],
    ...states.map((s) => [`${s.id}${s.id === DEFAULT_RUNTIME_ID ? ' (default)' : ''}`, s.stage, stateWord(s), s.dir]),
  ]
  const widths = rows[0].map((_c, i) => Math.max(...rows.map((r) => r[i].length)))
  for (const row of rows)
    out(
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
  const unprepared = states.filter((s) => !s.prepared && s.stage !== 'REMOVED')
  if (unprepared.length > 0) {
    out('')
    out(`To prepare one (npm installs its packages): ${prepareCommand(unprepared[0].id, cacheDir)} (or another id; --offline takes them from npm's cache)`)
  }
  return 0
}

/** `monitors runtimes prepare [ids..]`: each runtime's packages installed; exit 1 when one could not be. */
async function prepare(ids: string[], cacheDir: string, args: ArgumentsCamelCase<RuntimesArgs>): Promise<number> {
  const { stdout, stderr } = io()
  const wanted = ids.length > 0 ? [...new Set(ids)] : [DEFAULT_RUNTIME_ID]
  // every id checked before anything is installed: a typo among several prepares none
  const refused = wanted.map((id) => runtimeRefusal(id)).filter((r): r is string => r !== null)
  if (refused.length > 0) throw new UserError(`${refused.join('; ')}. Nothing was prepared.`)
  const fromLock = args.fromLock ? resolve(io().cwd, args.fromLock) : undefined
  let failed = 0
  for (const id of wanted) {
    const started = Date.now()
    stdout.write(`Preparing runtime ${id} in ${cacheDir}${args.offline ? " (offline: from npm's cache)" : ''}\n`)
    try {
      const before = runtimeStates(cacheDir).find((s) => s.id === id)
      const state = await prepareRuntime(id, {
        cacheDir,
        offline: args.offline,
        fromLock,
        force: args.force,
        progress: (line) => stdout.write(`  ${line}\n`),
      })
      if (before?.prepared && !args.force) stdout.write(`Runtime ${id} is already prepared in ${state.dir} (--force prepares it again)\n`)
      else stdout.write(`Runtime ${id} prepared in ${state.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`)
    } catch (error) {
      if (!(error instanceof UserError)) throw error
      failed++
      stderr.write(`Error: ${error.message}\n`)
    }
  }
  if (failed > 0) stderr.write(`${failed} of ${wanted.length} runtime(s) could not be prepared.\n`)
  return failed > 0 ? 1 : 0
}

/**
 * `monitors runtimes [list]` and `monitors runtimes prepare [ids..]`: the runtimes browser and
 * multi-step checks run on, and preparing them (their npm packages installed into the cache
 * folder a server or agent runs scripts from). See docs/scripts.md.
 */
export const runtimesCommand = {
  command: 'runtimes [action] [ids..]',
  describe: 'List the script runtimes and whether each is prepared here; prepare one (runtimes prepare [ids..]: its npm packages installed)',
  builder: (yargs: Argv) =>
    yargs
      .positional('action', { type: 'string', describe: 'list (the default) or prepare' })
      .positional('ids', { type: 'string', array: true, describe: `Runtimes to prepare (default: the newest, ${DEFAULT_RUNTIME_ID})` })
      .option('cache-dir', {
        type: 'string',
        requiresArg: true,
        describe: "Folder of the prepared runtimes (default $MONITORS_RUNTIME_CACHE, else ~/.cache/monitors/runtimes): the server's --runtime-cache",
      })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'Output of the list: a table, or json' })
      .option('offline', { type: 'boolean', default: false, describe: "Install from npm's cache only, without the network (npm --offline)" })
      .option('from-lock', {
        type: 'string',
        requiresArg: true,
        describe: 'A package-lock.json to take every version from (npm ci); with --offline, as after npm ci of that project',
      })
      .option('force', { type: 'boolean', default: false, describe: 'Prepare again even when the runtime is prepared' }),
  handler: async (args: ArgumentsCamelCase<RuntimesArgs>): Promise<number> => {
    const action = args.action ?? 'list'
    if (!ACTIONS.includes(action)) {
      const hint = findRuntime(action) ? ` (to prepare it: monitors runtimes prepare ${action})` : ''
      throw new UserError(`monitors runtimes: unknown action "${action}"; use list or prepare${hint}. Runtimes: ${RUNTIMES.map((r) => r.name).join(', ')}.`)
    }
    const cacheDir = resolve(io().cwd, args.cacheDir || defaultRuntimeCache())
    if (action === 'list') {
      if ((args.ids ?? []).length > 0) throw new UserError('monitors runtimes list takes no runtime ids (it lists them all)')
      return list(cacheDir, args.format)
    }
    return prepare((args.ids ?? []).map(String), cacheDir, args)
  },
} as unknown as CommandModule<object, RuntimesArgs>
