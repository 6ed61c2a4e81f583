import { join } from 'node:path'
import type { Argv } from 'yargs'
import { paint } from './color.js'
import { io } from './io.js'
import { checkNumber, err, environmentRequest, loadOrReport, setStdoutFormat, targetOptions, type OutputFormat } from './engine.js'
import { openTarget, type OpenTarget, type ProjectLocation, type TargetFlags } from './target.js'
import { show, type View } from './view.js'
import { accountMe, type AccountMe } from '../api/account.js'
import type { ApiClient } from '../api/client.js'
import { redact } from '../api/redact.js'
import { findConfigFile, loadProject } from '../project/index.js'
import { CHECK_KINDS, isResourceKind, kindOfConstruct } from '../resources/registry.js'
import { assertLockEnvironment, assertLockTarget, readLock, type LockFile } from '../state/lock.js'
import { UserError } from '../errors.js'

/*
 * What the operator's commands share: the target (chosen as for every other command, from the
 * project's config when there is one, else from MONITORING_API_URL and the flags), the key's
 * role, ids given as a project's logical id or as the start of an id, the list flags and the
 * output. Each command reads or writes through src/api/account.ts and shows a View (view.ts).
 */

export interface ConsoleArgs extends TargetFlags {
  config?: string
  env?: string
  format?: OutputFormat
}

export interface ListArgs {
  limit?: number
  all?: boolean
}

/** The target's flags and --format text|json|markdown. */
export function consoleOptions<T>(yargs: Argv<T>) {
  return targetOptions(yargs).option('format', {
    choices: ['text', 'markdown', 'json'] as const,
    default: 'text' as const,
    describe: 'Output: text (a table fitted to the terminal; tab-separated rows on a pipe), markdown, or json (one document on stdout)',
  })
}

/** --limit and --all of a list. */
export function listOptions<T>(yargs: Argv<T>, what: string, limit = 30) {
  return yargs
    .option('limit', {
      type: 'number',
      default: limit,
      requiresArg: true,
      coerce: checkNumber('--limit', 'a whole number from 1 to 10000', (n) => Number.isInteger(n) && n >= 1 && n <= 10_000),
      describe: `How many ${what} at most (the newest first where the list is by time)`,
    })
    .option('all', { type: 'boolean', default: false, describe: `Every one of the ${what}, page after page` })
}

export const limitOf = (args: ListArgs) => (args.all ? Infinity : (args.limit ?? 30))

/** `… 30 shown of 57: --limit 60 or --all for more`, when more follow. */
export function moreNote(shown: number, what: string, slice: { total?: number; more: boolean }): string | undefined {
  if (!slice.more) return undefined
  return `${shown} ${what} shown${slice.total !== undefined ? ` of ${slice.total}` : ''}: --limit ${Math.max(shown * 2, 10)} or --all for more.`
}

/** `2026-03-01 10:00:05` (UTC), or `-`. */
export function when(iso: string | null | undefined): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return '-'
  return new Date(iso).toISOString().slice(0, 19).replace('T', ' ')
}

/** `12 ms`, `1.5 s`, or `-`. */
export function ms(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '-'
  if (value >= 10_000) return `${Math.round(value / 100) / 10} s`
  return `${value < 10 ? Math.round(value * 10) / 10 : Math.round(value)} ms`
}

/**
 * A time as a command takes it (--from, --to): an ISO date or date-time, UNIX seconds, or a time
 * ago (`30m`, `6h`, `2d`, `1w`); in ms.
 */
export function parseWhen(flag: string, text: string, now = Date.now()): number {
  const ago = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i.exec(text.trim())
  if (ago) return now - Number(ago[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 }[ago[2].toLowerCase() as 's']
  if (/^\d{9,11}$/.test(text.trim())) return Number(text) * 1000
  const parsed = Date.parse(text)
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim()) && !Number.isNaN(parsed)) return parsed
  throw new UserError(
    `${flag} must be a time: an ISO date or date-time (2026-03-01, 2026-03-01T10:00:00Z), UNIX seconds, or a time ago (30m, 6h, 2d, 1w) (got ${JSON.stringify(text)}).`,
  )
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The whole id `text` names: itself when it is a whole id (a UUID, or a value `whole` accepts),
 * else the one id among `candidates()` that starts or ends with it (4 characters at least: the
 * short form tables show, view.ts shortId). Refused, naming the candidates, when none or several do.
 */
export async function wholeId(
  text: string,
  what: string,
  candidates: () => Promise<Array<{ id: string; label: string }>>,
  whole: (text: string) => boolean = (t) => UUID.test(t),
): Promise<string> {
  if (whole(text)) return text
  if (text.length < 4) throw new UserError(`${JSON.stringify(text)} is not a ${what} id: give the whole id, or its first 4 characters or more.`)
  const all = await candidates()
  const part = text.toLowerCase()
  const matches = all.filter((c) => c.id.toLowerCase().startsWith(part) || c.id.toLowerCase().endsWith(part))
  if (matches.length === 1) return matches[0].id
  if (matches.length === 0) throw new UserError(`No ${what} has an id starting or ending with ${JSON.stringify(text)}.`)
  throw new UserError(
    `${JSON.stringify(text)} is part of the ids of ${matches.length} ${what}s (${matches
      .slice(0, 5)
      .map((m) => `${m.id} ${m.label}`)
      .join(', ')}${matches.length > 5 ? ', …' : ''}): give more of the id.`,
  )
}

export interface Console {
  client: ApiClient
  target: OpenTarget['target']
  environment: string | undefined
  /** The lock's `kind:logicalId` of each remote id of a check (none without a project or lock). */
  logicalIds(): Map<string, string>
  /** A check's id from a project's logical id (`shop-dns`, `dns-check:shop-dns`), a whole id, or the start of one. */
  checkId(text: string, candidates: () => Promise<Array<{ id: string; label: string }>>): Promise<string>
  /** GET /v1/accounts/me, asked once. */
  me(): Promise<AccountMe | undefined>
  /** Refuses, before any write is sent, a command that changes the account when the key's role may only read. */
  requireWrite(command: string): Promise<void>
  show(view: View): void
}

class NoTarget extends UserError {}

/** The config alone (its target, environment and lock), or none when there is no config here and none is named. */
async function locate(args: ConsoleArgs): Promise<ProjectLocation | undefined | 'problems'> {
  const found = findConfigFile(io().cwd, args.config)
  if ('problem' in found && args.config === undefined) {
    const { env } = io()
    const url = args.apiUrl ?? env.MONITORING_API_URL
    if (args.local || environmentRequest(args) !== undefined || url === undefined) {
      const why = args.local
        ? '--local'
        : environmentRequest(args) !== undefined
          ? `${environmentRequest(args)?.from} (an environment of a config)`
          : 'the embedded local server'
      throw new NoTarget(
        `No target: ${why} needs a project, and there is no monitoring.config.ts in ${io().cwd} or above. Set MONITORING_API_URL and MONITORING_API_KEY (or pass --api-url and --api-key), or run inside a project.`,
      )
    }
    return undefined
  }
  const project = await loadOrReport(args, {
    warn: false,
    load: () => loadProject({ config: args.config, environment: environmentRequest(args), configOnly: true }),
  })
  return project ?? 'problems'
}

/** Opens the target, runs `work`, prints a failure as the format asks (`{ok: false, error}` in JSON), closes the target. */
export async function runConsole(args: ConsoleArgs, work: (c: Console) => Promise<number | void>): Promise<number> {
  setStdoutFormat(args.format)
  const fail = (message: string, environment?: string) => {
    if (args.format === 'json')
      io().stdout.write(`${JSON.stringify({ formatVersion: 1, ...(environment ? { environment } : {}), ok: false, error: redact(message) }, null, 2)}\n`)
  }
  let located: Awaited<ReturnType<typeof locate>>
  try {
    located = await locate(args)
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
    throw error
  }
  if (located === 'problems') {
    fail('The project has problems (see stderr).')
    return 1
  }
  const project: ProjectLocation = located ?? { configFile: join(io().cwd, 'monitoring.config.ts'), rootDir: io().cwd, config: {} }
  const environment = project.config.environment?.name
  let open: OpenTarget
  try {
    open = await openTarget(project, located ? args : { ...args, cache: false }, (line) => err(`${paint().dim(line)}\n`), io().env)
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), environment)
    throw error
  }
  try {
    return (await work(consoleOf(open, located !== undefined, args.format, environment))) ?? 0
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), environment)
    throw error
  } finally {
    await open.close()
  }
}

function consoleOf(open: OpenTarget, inProject: boolean, format: OutputFormat | undefined, environment: string | undefined): Console {
  let lock: LockFile | undefined | null = null
  let me: Promise<AccountMe | undefined> | undefined
  const readProjectLock = (): LockFile | undefined => {
    if (lock !== null) return lock
    lock = inProject ? readLock(open.lockPath) : undefined
    assertLockEnvironment(lock, open.environment, open.lockPath, open.lockNamedByEnvironment)
    assertLockTarget(lock, open.target, open.lockPath)
    return lock
  }
  const checkEntries = () => Object.values(readProjectLock()?.resources ?? {}).filter((e) => CHECK_KINDS.has(e.kind))
  const self: Console = {
    client: open.client,
    target: open.target,
    environment,
    logicalIds: () => new Map(checkEntries().map((e) => [e.remoteId, `${e.kind}:${e.logicalId}`])),
    async checkId(text, candidates) {
      const at = text.indexOf(':')
      const kind = at > 0 ? text.slice(0, at) : undefined
      const lockKind = kind === undefined ? undefined : isResourceKind(kind) ? kind : kindOfConstruct(kind)
      const logicalId = at > 0 ? text.slice(at + 1) : text
      if (kind !== undefined && lockKind === undefined)
        throw new UserError(
          `${JSON.stringify(text)}: ${JSON.stringify(kind)} is not a kind of check (write kind:logicalId, e.g. dns-check:shop-dns or DnsCheck:shop-dns).`,
        )
      const named = checkEntries().filter((e) => e.logicalId === logicalId && (lockKind === undefined || e.kind === lockKind))
      if (named.length === 1) return named[0].remoteId
      if (named.length > 1)
        throw new UserError(
          `${JSON.stringify(text)} names ${named.length} checks of the lock (${named.map((e) => `${e.kind}:${e.logicalId}`).join(', ')}): write kind:logicalId.`,
        )
      if (kind !== undefined)
        throw new UserError(`${JSON.stringify(text)} names no check of the lock ${open.lockPath}: run "monitors apply" first, or give the check's id.`)
      return wholeId(text, 'check', candidates)
    },
    me: () => (me ??= accountMe(open.client)),
    async requireWrite(command) {
      const key = (await self.me())?.key
      if (!key || key.role === 'write' || key.role === 'admin') return
      const which = `${key.id}${key.name ? ` "${key.name}"` : ''}`
      const may = key.role === 'read' ? 'it may only read' : key.role === 'agent' ? 'it may only run an agent' : 'it may not write'
      throw new UserError(
        `monitors ${command} changes the account, but the API key ${which} has the role ${key.role}: ${may}, so nothing was sent. Use a key of role write or admin.`,
      )
    },
    show: (view) => show(view, format, environment),
  }
  return self
}
