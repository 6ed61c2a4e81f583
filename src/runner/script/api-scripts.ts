/**
 * The setup and teardown scripts of API checks (a check's `localSetupScript` /
 * `localTearDownScript`, and the snippets it names), run in one sandboxed child process per
 * attempt: the permission model of sandbox.ts (read: the harness, the runtime, a scratch folder;
 * write: the scratch folder; no child processes, no worker threads, no addons), an environment
 * of the check's variables only, a V8 heap limit, a watch on the process's memory, and a
 * wall-clock limit per script. A script is the body of an async function (top-level `await`
 * works), JavaScript or TypeScript, with `import` or `require` of Node's modules and of the
 * packages of a prepared runtime. See docs/scripts.md.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { transform } from 'esbuild'
import { spawn, type ChildProcess } from 'node:child_process'
import { killTree, processTable, sandboxFlags, treeMemory } from './sandbox.js'

/** Wall-clock limit of one setup or teardown script, as the hosted service's (10 s). */
export const DEFAULT_API_SCRIPT_TIMEOUT_MS = 10_000
/** V8 heap of the scripts' process, MB. */
export const DEFAULT_API_SCRIPT_HEAP_MB = 128
/** Memory (PSS) of the scripts' process, MB. */
export const DEFAULT_API_SCRIPT_MEMORY_MB = 256
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
}

/** What the scripts' process needs to refuse non-public addresses itself (targets.ts's ranges, the exceptions). */
export interface TargetGuard {
  v4: ReadonlyArray<readonly [string, number, string]>
  v6: ReadonlyArray<readonly [string, number, string]>
  /** `allowedTargets`: address, CIDR range, or address:port */
  allowed: readonly string[]
}

/** What one script did: the request and response as it left them, the environment, its output. */
export type PhaseOutcome =
  | { ok: true; request: ScriptRequest; response: ScriptResponse | null; env: Record<string, string>; logs: string; durationMs: number }
  | { ok: false; error: string; logs: string; durationMs: number }

type ChildMessage =
  | { t: 'done'; request: ScriptRequest; response: ScriptResponse | null; env: Record<string, string> }
  | { t: 'error'; message: string }

/** The child's side: runs each script it is sent, in order, and answers what it left. */
const HARNESS = String.raw`'use strict'
const { createRequire, builtinModules } = require('node:module')
const path = require('node:path')
const AsyncFunction = (async () => {}).constructor
const builtins = new Set(builtinModules)
let runtimeRequire = null
let current = null
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
  if (current) { current = null; process.send({ t: 'error', message: describe(error) }) }
}
let guarded = false
// the private-target policy on every TCP connection the scripts open (http, https, fetch, net,
// tls all connect through net.Socket): an IP address is checked before the socket connects, a
// name's every address by the lookup the socket uses; local (unix) sockets are refused; the
// patched method cannot be replaced
function guard(g) {
  if (!g || guarded) return
  guarded = true
  const net = require('node:net')
  const lists = []
  for (const [family, ranges] of [['ipv4', g.v4], ['ipv6', g.v6]]) {
    for (const [address, prefix, what] of ranges) { const l = new net.BlockList(); l.addSubnet(address, prefix, family); lists.push([l, family, what]) }
  }
  const own = new Set()
  for (const list of Object.values(require('node:os').networkInterfaces())) for (const i of list || []) own.add(i.address.toLowerCase().replace(/%.*$/, ''))
  const allowed = g.allowed.map((text) => {
    let host = text.trim()
    let port = null
    const b = /^\[([^\]]+)\](?::(\d+))?$/.exec(host)
    const p = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(host)
    if (b) { host = b[1]; port = b[2] === undefined ? null : Number(b[2]) } else if (p) { host = p[1]; port = Number(p[2]) }
    const [address, prefix] = host.split('/')
    const family = net.isIP(address) === 6 ? 'ipv6' : 'ipv4'
    const l = new net.BlockList()
    if (prefix === undefined) l.addAddress(address, family); else l.addSubnet(address, Number(prefix), family)
    return { l, port }
  })
  const refusal = (address, port) => {
    let bare = String(address || '').replace(/%.*$/, '').toLowerCase()
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)
    if (mapped) bare = mapped[1]
    const family = net.isIP(bare) === 6 ? 'ipv6' : net.isIP(bare) === 4 ? 'ipv4' : null
    if (!family) return 'an address that cannot be read'
    if (allowed.some((a) => (a.port === null || a.port === port) && a.l.check(bare, family))) return null
    for (const [l, f, what] of lists) if (f === family && l.check(bare, f)) return what
    if (bare === '255.255.255.255') return 'broadcast address'
    if (own.has(bare)) return 'address of this server'
    return null
  }
  const refused = (address, port, why) => {
    const error = new Error('connection to ' + address + ':' + port + ' refused by the private-target policy (--private-targets deny): ' + why)
    error.code = 'ERR_TARGET_REFUSED'
    return error
  }
  const dnsLookup = require('node:dns').lookup
  const original = net.Socket.prototype.connect
  Object.defineProperty(net.Socket.prototype, 'connect', {
    value: function connect(...args) {
      // net.connect() passes its normalized [options, callback]; a socket's own connect(options | port, host)
      let opts = Array.isArray(args[0]) ? args[0][0] : args[0]
      if (opts === null || typeof opts !== 'object') {
        opts = { port: Number(args[0]), host: typeof args[1] === 'string' ? args[1] : 'localhost' }
        args = [opts, ...args.slice(1).filter((a) => typeof a === 'function')]
      }
      const port = Number(opts.port)
      if (opts.path !== undefined) {
        process.nextTick(() => this.destroy(refused(opts.path, 'unix', 'a local socket')))
        return this
      }
      const host = opts.host || 'localhost'
      if (net.isIP(host)) {
        const why = refusal(host, port)
        if (why) {
          process.nextTick(() => this.destroy(refused(host, port, why)))
          return this
        }
      } else {
        // every address the name resolves to is checked before the socket connects to one
        const lookup = typeof opts.lookup === 'function' ? opts.lookup : dnsLookup
        opts.lookup = (hostname, options, callback) => lookup(hostname, options, (error, address, family) => {
          if (error) return callback(error)
          const list = Array.isArray(address) ? address : [{ address, family }]
          for (const a of list) {
            const why = refusal(a.address, port)
            if (why) return callback(refused(a.address, port, why))
          }
          callback(null, address, family)
        })
      }
      return original.apply(this, args)
    },
    writable: false,
    configurable: false,
  })
  guardUdp(refusal, refused, dnsLookup)
}
// UDP follows the same policy: a datagram's destination (send, or connect of a socket) is checked
// before it leaves, a name's every address first resolved; and a DNS server a script names
// (dns.setServers, a Resolver's setServers) is checked as it is set, since c-ares queries it
// over UDP outside dgram. The system's own resolvers are left as they are (names are looked up
// through them for every connection).
function guardUdp(refusal, refused, dnsLookup) {
  const dgram = require('node:dgram')
  const net = require('node:net')
  const check = (host, port, done) => {
    const target = host === undefined || host === null || typeof host === 'function' ? '127.0.0.1' : String(host)
    if (net.isIP(target)) {
      const why = refusal(target, port)
      return done(why ? refused(target, port, why) : null, target)
    }
    dnsLookup(target, { all: true }, (error, list) => {
      if (error) return done(error)
      for (const a of list) {
        const why = refusal(a.address, port)
        if (why) return done(refused(a.address, port, why))
      }
      done(null, list[0].address)
    })
  }
  const fail = (socket, callback, error) => process.nextTick(() => (typeof callback === 'function' ? callback(error) : socket.emit('error', error)))
  const send = dgram.Socket.prototype.send
  Object.defineProperty(dgram.Socket.prototype, 'send', {
    value: function (...args) {
      // send(msg, [offset, length,] port, [address,] [callback]); a connected socket: send(msg, [offset, length,] [callback])
      const at = typeof args[1] === 'number' && typeof args[2] === 'number' && typeof args[3] === 'number' ? 3 : typeof args[1] === 'number' && typeof args[2] !== 'number' ? 1 : -1
      if (at < 0) return send.apply(this, args)
      const callback = args.find((a) => typeof a === 'function')
      const host = typeof args[at + 1] === 'string' ? args[at + 1] : undefined
      check(host, Number(args[at]), (error, address) => {
        if (error) return fail(this, callback, error)
        const rest = args.slice(0, at + 1)
        send.apply(this, [...rest, address, ...(callback ? [callback] : [])])
      })
    },
    writable: false,
    configurable: false,
  })
  const connect = dgram.Socket.prototype.connect
  Object.defineProperty(dgram.Socket.prototype, 'connect', {
    value: function (port, host, callback) {
      const done = typeof host === 'function' ? host : callback
      check(typeof host === 'string' ? host : undefined, Number(port), (error, address) => {
        if (error) return fail(this, undefined, error)
        connect.call(this, port, address, done)
      })
    },
    writable: false,
    configurable: false,
  })
  const dns = require('node:dns')
  const base = Object.getPrototypeOf(dns.Resolver.prototype)
  const owner = Object.prototype.hasOwnProperty.call(base, 'setServers') ? base : dns.Resolver.prototype
  const setServers = owner.setServers
  Object.defineProperty(owner, 'setServers', {
    value: function (servers) {
      for (const server of Array.isArray(servers) ? servers : []) {
        const text = String(server)
        const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) || /^(\d+\.\d+\.\d+\.\d+)(?::(\d+))?$/.exec(text) || [text, text, undefined]
        const port = m[2] === undefined ? 53 : Number(m[2])
        const why = refusal(m[1], port)
        if (why) throw refused(m[1], port, why)
      }
      return setServers.call(this, servers)
    },
    writable: false,
    configurable: false,
  })
}
process.on('uncaughtException', fail)
process.on('unhandledRejection', fail)
process.on('message', async (m) => {
  guard(m.guard)
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
    process.send({ t: 'done', request, response, env: { ...process.env } })
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
    return { error: first ? `${first.text}${first.location ? ` (line ${first.location.line}, column ${first.location.column + 1})` : ''}` : (error as Error).message }
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
        const fields = named[1].split(',').map((f) => f.trim()).filter(Boolean).map((f) => f.replace(/^([\w$]+|"[^"]*")\s+as\s+([\w$]+)$/, '$1: $2'))
        parts.push(`const { ${fields.join(', ')} } = ${mod};`)
      }
      return parts.join(' ') || `${mod};`
    })
    .replace(/^export\s*\{\s*\};?[ \t]*$/gm, '')
}

/** One attempt's scripts: a child process that runs them in turn, and is stopped at the end. */
export class ApiScriptSandbox {
  private logs = ''
  private pending: ((m: ChildMessage | { t: 'gone'; why: string }) => void) | null = null
  private stopped: string | null = null
  private readonly watchdog: NodeJS.Timeout
  private readonly onAbort = () => this.stop('the run was aborted')

  private constructor(
    private readonly child: ChildProcess,
    private readonly runDir: string,
    private readonly options: ApiScriptSandboxOptions,
  ) {
    const keep = (chunk: Buffer) => { this.logs = (this.logs + chunk.toString('utf8')).slice(-LOG_KEEP) }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    child.on('message', (m: ChildMessage) => this.settle(m))
    child.on('exit', (code, signal) => {
      const why = this.stopped ?? (/heap out of memory|Reached heap limit|Allocation failed/i.test(this.logs)
        ? `it ran out of memory (its heap limit is ${this.heapMb} MB)`
        : `its process ended (${signal ?? `exit code ${code}`})`)
      this.stopped ??= why
      this.settle({ t: 'gone', why })
    })
    child.on('error', (error) => this.settle({ t: 'gone', why: `its process could not be started: ${error.message}` }))
    const limit = this.memoryMb * 1024 * 1024
    this.watchdog = setInterval(() => {
      const used = treeMemory(child.pid, processTable())
      if (used > limit) this.stop(`it used ${Math.round(used / 1024 / 1024)} MB, over the memory limit of ${this.memoryMb} MB`)
    }, 250)
    options.signal?.addEventListener('abort', this.onAbort)
  }

  private get heapMb(): number { return this.options.heapLimitMb ?? DEFAULT_API_SCRIPT_HEAP_MB }
  private get memoryMb(): number { return this.options.memoryLimitMb ?? DEFAULT_API_SCRIPT_MEMORY_MB }

  /** Starts the child process (its folders in `workDir`). */
  static open(options: ApiScriptSandboxOptions): ApiScriptSandbox {
    const workDir = options.workDir ?? tmpdir()
    mkdirSync(workDir, { recursive: true })
    const runDir = realpathSync(mkdtempSync(path.join(workDir, 'monitors-api-script-')))
    const bundle = path.join(runDir, 'harness')
    const scratch = path.join(runDir, 'scratch')
    mkdirSync(bundle)
    mkdirSync(scratch)
    const entry = path.join(bundle, 'harness.cjs')
    writeFileSync(entry, HARNESS)
    const heap = options.heapLimitMb ?? DEFAULT_API_SCRIPT_HEAP_MB
    // without a runtime, the harness's folder stands in for it: nothing more is readable (a
    // path given twice to the permission model aborts Node 20: each once)
    const flags = [...new Set(sandboxFlags({ bundle, runtimeDir: options.runtimeDir ?? bundle, scratch, artifacts: scratch }, heap))]
    const child = spawn(process.execPath, [...flags, entry], {
      cwd: scratch,
      env: { ...options.env, HOME: scratch, TMPDIR: scratch },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
      // its own process group: a kill reaches whatever it may have started
      detached: true,
    })
    return new ApiScriptSandbox(child, runDir, options)
  }

  /** Runs one script; the request and response (teardown) go in, and come back as it left them. */
  async run(source: string, request: ScriptRequest, response: ScriptResponse | null): Promise<PhaseOutcome> {
    const started = performance.now()
    const logsBefore = this.logs.length
    const took = () => Math.round(performance.now() - started)
    const output = () => this.logs.slice(Math.min(logsBefore, this.logs.length))
    if (this.stopped) return { ok: false, error: `the scripts' process was stopped: ${this.stopped}`, logs: '', durationMs: 0 }
    const compiled = await compileScript(source)
    if ('error' in compiled) return { ok: false, error: `it does not compile: ${compiled.error}`, logs: '', durationMs: took() }
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_API_SCRIPT_TIMEOUT_MS
    const answer = new Promise<ChildMessage | { t: 'gone'; why: string }>((resolve) => { this.pending = resolve })
    const timer = setTimeout(() => this.stop(`it did not finish within its limit of ${timeoutMs / 1000} s and was stopped`), timeoutMs)
    try {
      this.child.send({ code: compiled.code, request, response, runtimeDir: this.options.runtimeDir, runtimeMissing: this.options.runtimeMissing ?? 'no runtime is prepared here', guard: this.options.guard ?? null })
    } catch (error) {
      this.settle({ t: 'gone', why: `its process could not be reached: ${(error as Error).message}` })
    }
    const m = await answer
    clearTimeout(timer)
    // what the script printed reaches the pipe a moment after its answer
    await new Promise((resolve) => setImmediate(resolve))
    if (m.t === 'done') return { ok: true, request: m.request, response: m.response, env: m.env, logs: output(), durationMs: took() }
    return { ok: false, error: m.t === 'error' ? m.message : m.why, logs: output(), durationMs: took() }
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

  /** Stops the process and removes its folders. */
  close(): void {
    clearInterval(this.watchdog)
    this.options.signal?.removeEventListener('abort', this.onAbort)
    this.stop('the attempt ended')
    rmSync(this.runDir, { recursive: true, force: true })
  }
}
