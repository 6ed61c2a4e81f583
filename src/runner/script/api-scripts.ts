/**
 * The setup and teardown scripts of API checks (a check's `localSetupScript` /
 * `localTearDownScript`, and the snippets it names), run in one sandboxed child process per
 * attempt: the run's containment (jail.ts: a uid of its own as root, its own namespaces, a
 * read-only view, its scratch folder a memory folder of a fixed size, a network whose one way
 * out is the egress proxy), and inside it the permission model of sandbox.ts (read: the
 * harness, the runtime, a scratch folder; write: the scratch folder; no child processes, no
 * worker threads, no addons) and the network guard, an environment of the check's variables
 * only, a V8 heap limit, a watch on the process's memory, and a wall-clock limit per script. A
 * script is the body of an async function (top-level `await` works), JavaScript or
 * TypeScript, with `import` or `require` of Node's modules and of the packages of a prepared
 * runtime. See docs/scripts.md.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { transform } from 'esbuild'
import { spawn, type ChildProcess } from 'node:child_process'
import type { TargetPolicy } from '../targets.js'
import { allocateRunUser, closedToOthers, effectiveUidRange, reapUser, type RunUser, type UidRange } from './contain.js'
import { startEgress, type EgressProxy } from './egress.js'
import { containment, jailCommand } from './jail.js'
import { folderBytes, killTree, processTable, sandboxFlags, treeMemory } from './sandbox.js'
import { NET_GUARD_SOURCE, type TargetGuard } from './net-guard.js'

/** Wall-clock limit of one setup or teardown script, as the hosted service's (10 s). */
export const DEFAULT_API_SCRIPT_TIMEOUT_MS = 10_000
/** V8 heap of the scripts' process, MB. */
export const DEFAULT_API_SCRIPT_HEAP_MB = 128
/** Memory (PSS) of the scripts' process, MB. */
export const DEFAULT_API_SCRIPT_MEMORY_MB = 256
/** What the scripts of one attempt may write (their scratch folder), bytes. */
export const DEFAULT_API_SCRIPT_DISK_BYTES = 64 * 1024 * 1024
/** The run's own /tmp and /dev/shm in its containment, bytes each (its scratch folder is where it writes). */
const API_TMP_BYTES = 8 * 1024 * 1024
/** What a script prints is kept up to this many bytes (the last ones). */
const LOG_KEEP = 16 * 1024

/** The request a setup script sees and may change (headers and query parameters as objects). */
export interface ScriptRequest {
  method: string
  url: string
  body: string
  headers: Record<string, string>
  queryParameters: Record<string, string>
}

/** The response a teardown script sees and may change (before the assertions). */
export interface ScriptResponse {
  statusCode: number
  statusText: string
  headers: Record<string, string>
  body: string
  timings: Record<string, number> | null
}

export interface ApiScriptLimits {
  /** Per script, ms (default 10 000). */
  timeoutMs?: number
  heapLimitMb?: number
  memoryLimitMb?: number
  /** What the attempt's scripts may write, bytes (default 64 MiB). */
  diskLimitBytes?: number
}

export interface ApiScriptSandboxOptions extends ApiScriptLimits {
  /** The process's whole environment: the check's variables. */
  env: Record<string, string>
  /** A prepared runtime whose packages scripts may import; null: Node's modules only. */
  runtimeDir: string | null
  /** Why no runtime is there (said when a script imports a package). */
  runtimeMissing: string | null
  workDir?: string
  signal?: AbortSignal
  /** The private-target policy `deny`, for the scripts' own connections (null: `allow`). */
  guard?: TargetGuard | null
  /** The policy of the egress proxy, the one way out of a contained run's network. */
  policy?: TargetPolicy
  /** The uids a contained run is given when this process is root (contain.ts; 'off': none). */
  uidRange?: UidRange | 'off'
}

/** What one script did: the request and response as it left them, the environment, its output. */
export type PhaseOutcome = (
  | { ok: true; request: ScriptRequest; response: ScriptResponse | null; env: Record<string, string>; logs: string; durationMs: number }
  | { ok: false; error: string; logs: string; durationMs: number }
) & {
  /** What the sandbox refused the script while it ran (a connection, ...), caught by the script or not. */
  refused: string[]
}

type ChildMessage = { t: 'done'; request: ScriptRequest; response: ScriptResponse | null; env: Record<string, string> } | { t: 'error'; message: string }

/** What the sandbox refused a script, said by the child as it happens (not an answer to a run). */
interface RefusedMessage {
  t: 'refused'
  message: string
}

/** The child's side: runs each script it is sent, in order, and answers what it left. */
const HARNESS = `'use strict'
const { createRequire, builtinModules } = require('node:module')
const path = require('node:path')
const AsyncFunction = (async () => {}).constructor
const builtins = new Set(builtinModules)
let runtimeRequire = null
let current = null
// the containment's working directory is not one of the check's variables
if (process.env.PWD === process.cwd()) delete process.env.PWD
// what the sandbox refuses is told to the parent at once, by a channel taken before any script runs
const tell = process.send.bind(process)
const reportRefusal = (message) => tell({ t: 'refused', message })
function describe(error) {
  if (error && typeof error === 'object') {
    const name = error.name && error.name !== 'Error' ? error.name + ': ' : ''
    const code = error.code === 'ERR_ACCESS_DENIED' ? ' (the sandbox refused: ' + [error.permission, error.resource].filter(Boolean).join(' ') + ')' : ''
    const cause = error.cause && typeof error.cause === 'object' && error.cause.message ? ': ' + String(error.cause.message) : ''
    return name + String(error.message) + cause + code
  }
  return 'threw ' + String(error)
}
function fail(error) {
  if (current) { current = null; tell({ t: 'error', message: describe(error) }) }
}
${NET_GUARD_SOURCE}
reportFileRefusals(reportRefusal)
process.on('uncaughtException', fail)
process.on('unhandledRejection', fail)
let routed = false
process.on('message', async (m) => {
  guard(m.guard, reportRefusal)
  if (m.egress && !routed) {
    routed = true
    routeThrough(m.egress, reportRefusal)
  }
  if (m.runtimeDir && !runtimeRequire) runtimeRequire = createRequire(path.join(m.runtimeDir, 'package.json'))
  const load = (id) => {
    if (typeof id === 'string' && (id.startsWith('node:') || builtins.has(id))) return require(id)
    if (runtimeRequire) return runtimeRequire(id)
    throw new Error('cannot import "' + id + '": ' + m.runtimeMissing)
  }
  const request = m.request
  const response = m.response
  const module = { exports: {} }
  const token = {}
  current = token
  try {
    const fn = new AsyncFunction('request', 'response', 'require', 'module', 'exports', '__importDefault', m.code)
    await fn(request, response === null ? undefined : response, load, module, module.exports, (x) => (x && x.__esModule ? x.default : x))
    if (current !== token) return
    current = null
    tell({ t: 'done', request, response, env: { ...process.env } })
  } catch (error) {
    if (current === token) fail(error)
  }
})
`

const transformed = new Map<string, string>()

/** A script as the harness runs it: types stripped, `import`s turned into `require`s (top-level await kept). */
export async function compileScript(source: string): Promise<{ code: string } | { error: string }> {
  const known = transformed.get(source)
  if (known !== undefined) return { code: known }
  let out: string
  try {
    out = (await transform(source, { loader: 'ts', format: 'esm', target: 'node20', logLevel: 'silent' })).code
  } catch (error) {
    const first = (error as { errors?: Array<{ text: string; location?: { line: number; column: number } | null }> }).errors?.[0]
    return {
      error: first ? `${first.text}${first.location ? ` (line ${first.location.line}, column ${first.location.column + 1})` : ''}` : (error as Error).message,
    }
  }
  const code = importsToRequires(out)
  if (transformed.size > 500) transformed.clear()
  transformed.set(source, code)
  return { code }
}

const STRING = String.raw`("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')`
const IMPORT_FROM = new RegExp(String.raw`^import\s+([\s\S]*?)\s+from\s*${STRING};?[ \t]*$`, 'gm')
const IMPORT_BARE = new RegExp(String.raw`^import\s*${STRING};?[ \t]*$`, 'gm')

/** esbuild's ESM output with its (regularly printed) import declarations made `require` calls. */
function importsToRequires(code: string): string {
  return code
    .replace(IMPORT_BARE, (_, spec: string) => `require(${spec});`)
    .replace(IMPORT_FROM, (_, clause: string, spec: string) => {
      const parts: string[] = []
      let rest = clause.trim()
      const named = /\{([\s\S]*)\}/.exec(rest)
      if (named) rest = rest.replace(named[0], '').trim()
      const ns = /\*\s+as\s+([\w$]+)/.exec(rest)
      if (ns) rest = rest.replace(ns[0], '').trim()
      const def = rest.replace(/,/g, '').trim()
      const mod = `require(${spec})`
      if (def) parts.push(`const ${def} = __importDefault(${mod});`)
      if (ns) parts.push(`const ${ns[1]} = ${mod};`)
      if (named) {
        const fields = named[1]
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean)
          .map((f) => f.replace(/^([\w$]+|"[^"]*")\s+as\s+([\w$]+)$/, '$1: $2'))
        parts.push(`const { ${fields.join(', ')} } = ${mod};`)
      }
      return parts.join(' ') || `${mod};`
    })
    .replace(/^export\s*\{\s*\};?[ \t]*$/gm, '')
}

/** What a contained attempt holds besides its process: its user, its egress proxy, the socket the scripts reach it on. */
interface Held {
  user: RunUser | null
  egress: EgressProxy | null
  socket: string | null
}

/** One attempt's scripts: a child process that runs them in turn, and is stopped at the end. */
export class ApiScriptSandbox {
  private logs = ''
  private refused: string[] = []
  private pending: ((m: ChildMessage | { t: 'gone'; why: string }) => void) | null = null
  private stopped: string | null = null
  private readonly watchdog: NodeJS.Timeout
  private readonly onAbort = () => this.stop('the run was aborted')

  private constructor(
    private readonly child: ChildProcess,
    private readonly runDir: string,
    private readonly options: ApiScriptSandboxOptions,
    private readonly held: Held,
  ) {
    const keep = (chunk: Buffer) => {
      this.logs = (this.logs + chunk.toString('utf8')).slice(-LOG_KEEP)
    }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    child.on('message', (m: ChildMessage | RefusedMessage) => {
      if (m.t === 'refused') {
        if (this.refused.length < 20 && !this.refused.includes(String(m.message))) this.refused.push(String(m.message))
      } else {
        this.settle(m)
      }
    })
    child.on('exit', (code, signal) => {
      const why =
        this.stopped ??
        (/heap out of memory|Reached heap limit|Allocation failed/i.test(this.logs)
          ? `it ran out of memory (its heap limit is ${this.heapMb} MB)`
          : signal === 'SIGXFSZ'
            ? `it wrote a file over its disk limit of ${this.diskBytes} bytes`
            : `its process ended (${signal ?? `exit code ${code}`})`)
      this.stopped ??= why
      this.settle({ t: 'gone', why })
    })
    child.on('error', (error) => this.settle({ t: 'gone', why: `its process could not be started: ${error.message}` }))
    const limit = this.memoryMb * 1024 * 1024
    const scratch = path.join(runDir, 'scratch')
    this.watchdog = setInterval(() => {
      const used = treeMemory(child.pid, processTable())
      if (used > limit) this.stop(`it used ${Math.round(used / 1024 / 1024)} MB, over the memory limit of ${this.memoryMb} MB`)
      // contained, the scratch folder is a memory folder of that size; else it is counted here
      const written = held.socket ? 0 : folderBytes(scratch, this.diskBytes)
      if (written > this.diskBytes) this.stop(`it wrote more than its disk limit of ${this.diskBytes} bytes`)
    }, 250)
    options.signal?.addEventListener('abort', this.onAbort)
  }

  private get heapMb(): number {
    return this.options.heapLimitMb ?? DEFAULT_API_SCRIPT_HEAP_MB
  }
  private get memoryMb(): number {
    return this.options.memoryLimitMb ?? DEFAULT_API_SCRIPT_MEMORY_MB
  }
  private get diskBytes(): number {
    return this.options.diskLimitBytes ?? DEFAULT_API_SCRIPT_DISK_BYTES
  }

  /**
   * Starts the child process: contained (jail.ts) where this machine can, its folders then in
   * the temporary folder (its own user passes there); else its folders in `workDir`, held by the
   * permission model alone. A problem instead when a contained run cannot start (every uid in use,
   * a runtime its user cannot read).
   */
  static async open(options: ApiScriptSandboxOptions): Promise<ApiScriptSandbox | { problem: string }> {
    const contained = containment().available
    const range = contained ? effectiveUidRange(options.uidRange) : null
    const user = range ? allocateRunUser(range) : null
    if (range && !user) return { problem: `every uid of ${range.first}-${range.last} is in use by another run: the scripts did not start` }
    const closed = user && options.runtimeDir ? closedToOthers(options.runtimeDir) : null
    if (closed) {
      user?.release()
      return {
        problem: `the runtime ${options.runtimeDir} cannot be read by the run's own user: ${closed.path} is closed to other users (mode ${closed.mode}); prepare the runtimes in a folder other users can read (docs/scripts.md)`,
      }
    }
    const workDir = user ? tmpdir() : (options.workDir ?? tmpdir())
    mkdirSync(workDir, { recursive: true })
    const runDir = realpathSync(mkdtempSync(path.join(workDir, 'monitors-api-script-')))
    const held: Held = { user, egress: null, socket: contained ? path.join(runDir, 'egress.sock') : null }
    try {
      const child = await ApiScriptSandbox.start(runDir, options, held)
      return new ApiScriptSandbox(child, runDir, options, held)
    } catch (error) {
      await held.egress?.close()
      rmSync(runDir, { recursive: true, force: true })
      user?.release()
      return { problem: `the scripts' process could not be started: ${(error as Error).message}` }
    }
  }

  /** Writes the harness, starts the egress proxy of a contained run, and spawns the child. */
  private static async start(runDir: string, options: ApiScriptSandboxOptions, held: Held): Promise<ChildProcess> {
    const bundle = path.join(runDir, 'harness')
    const scratch = path.join(runDir, 'scratch')
    mkdirSync(bundle)
    mkdirSync(scratch)
    const entry = path.join(bundle, 'harness.cjs')
    writeFileSync(entry, HARNESS)
    const heap = options.heapLimitMb ?? DEFAULT_API_SCRIPT_HEAP_MB
    const disk = options.diskLimitBytes ?? DEFAULT_API_SCRIPT_DISK_BYTES
    // without a runtime, the harness's folder stands in for it: nothing more is readable (a
    // path given twice to the permission model aborts Node 20: each once)
    const flags = [...new Set(sandboxFlags({ bundle, runtimeDir: options.runtimeDir ?? bundle, scratch, artifacts: scratch }, heap))]
    let command: [string, string[]] = [process.execPath, [...flags, entry]]
    if (held.socket) {
      // its one way out: the egress proxy on a socket only its user may connect to
      held.egress = await startEgress(options.policy ?? {}, { path: held.socket })
      if (held.user) {
        for (const d of [runDir, bundle]) chmodSync(d, 0o711)
        chownSync(held.socket, held.user.uid, held.user.gid)
        chmodSync(held.socket, 0o600)
      }
      command = jailCommand(process.execPath, [...flags, entry], {
        user: held.user,
        readOnly: [runDir, ...(options.runtimeDir ? [options.runtimeDir] : [])],
        writable: [],
        tmpfs: [{ path: scratch, bytes: disk }],
        tmpBytes: API_TMP_BYTES,
        shmBytes: API_TMP_BYTES,
        cwd: scratch,
        processes: 256,
        fileBytes: disk,
        dataBytes: (options.memoryLimitMb ?? DEFAULT_API_SCRIPT_MEMORY_MB) * 1024 * 1024,
      })
    }
    return spawn(command[0], command[1], {
      cwd: held.socket ? '/' : scratch,
      env: { ...options.env, HOME: scratch, TMPDIR: scratch },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
      // its own process group: a kill reaches whatever it may have started
      detached: true,
    })
  }

  /** Runs one script; the request and response (teardown) go in, and come back as it left them. */
  async run(source: string, request: ScriptRequest, response: ScriptResponse | null): Promise<PhaseOutcome> {
    const started = performance.now()
    const logsBefore = this.logs.length
    const took = () => Math.round(performance.now() - started)
    const output = () => this.logs.slice(Math.min(logsBefore, this.logs.length))
    if (this.stopped) return { ok: false, error: `the scripts' process was stopped: ${this.stopped}`, logs: '', durationMs: 0, refused: [] }
    const compiled = await compileScript(source)
    if ('error' in compiled) return { ok: false, error: `it does not compile: ${compiled.error}`, logs: '', durationMs: took(), refused: [] }
    this.refused = []
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_API_SCRIPT_TIMEOUT_MS
    const answer = new Promise<ChildMessage | { t: 'gone'; why: string }>((resolve) => {
      this.pending = resolve
    })
    const timer = setTimeout(() => this.stop(`it did not finish within its limit of ${timeoutMs / 1000} s and was stopped`), timeoutMs)
    try {
      this.child.send({
        code: compiled.code,
        request,
        response,
        runtimeDir: this.options.runtimeDir,
        runtimeMissing: this.options.runtimeMissing ?? 'no runtime is prepared here',
        guard: this.options.guard ?? null,
        egress: this.held.socket,
      })
    } catch (error) {
      this.settle({ t: 'gone', why: `its process could not be reached: ${(error as Error).message}` })
    }
    const m = await answer
    clearTimeout(timer)
    // what the script printed reaches the pipe a moment after its answer
    await new Promise((resolve) => setImmediate(resolve))
    const refused = this.refused.splice(0)
    if (m.t === 'done') return { ok: true, request: m.request, response: m.response, env: m.env, logs: output(), durationMs: took(), refused }
    return { ok: false, error: m.t === 'error' ? m.message : m.why, logs: output(), durationMs: took(), refused }
  }

  private settle(m: ChildMessage | { t: 'gone'; why: string }): void {
    const resolve = this.pending
    this.pending = null
    resolve?.(m)
  }

  private stop(why: string): void {
    this.stopped ??= why
    killTree(this.child.pid)
    try {
      this.child.kill('SIGKILL')
    } catch {
      /* gone */
    }
  }

  /**
   * Stops the process and its egress proxy, and removes its folders; the run's uid is given back
   * once no process of it is left (killed meanwhile, without holding the attempt).
   */
  close(): void {
    clearInterval(this.watchdog)
    this.options.signal?.removeEventListener('abort', this.onAbort)
    this.stop('the attempt ended')
    void this.held.egress?.close()
    rmSync(this.runDir, { recursive: true, force: true })
    const user = this.held.user
    if (user)
      void reapUser(user.uid).then((left) => {
        if (left === 0) user.release()
      })
  }
}
