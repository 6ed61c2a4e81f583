import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ApiClient } from '../api/client.js'
import { redactUrl } from '../api/redact.js'
import { LOCK_FILE_NAME, type LockTarget } from '../state/lock.js'
import { environmentLockName } from '../project/config.js'
import { compileCacheDir } from '../project/loader.js'
import { UserError } from '../errors.js'

/** Where the CLI sends requests, resolved from flags, the config and the environment. */
/** Requests per minute the embedded server allows its one client: far above anything it sends. */
const EMBEDDED_RATE_LIMIT = { max: 10_000_000, timeWindowMs: 60_000 }

export interface TargetFlags {
  apiUrl?: string
  apiKey?: string
  accountId?: string
  /** The target's identity in the lock file (default: the base URL). */
  targetId?: string
  /** Lock file path (relative to the working directory). */
  lock?: string
  /** Per-request timeout in seconds. */
  timeout?: number
  /** Retries of a request after a 5xx, a timeout or a lost connection. */
  retries?: number
  /** Allow plain http:// to a host that is not this machine. */
  insecureHttp?: boolean
  /** Use the embedded local server on purpose (required in CI, where a missing URL is refused). */
  local?: boolean
  /** Operations in flight at once (apply, destroy): the client keeps up to as many connections. */
  concurrency?: number
  /** false (`--no-cache`): list pages are not kept between commands (src/api/page-cache.ts). */
  cache?: boolean
}

export interface ProjectLocation {
  configFile: string
  rootDir: string
  config: {
    api?: { baseUrl?: string; accountId?: string; apiKey?: string; targetId?: string }
    /** The chosen environment: its own lock setting (relative to the config's folder), if any. */
    environment?: { name: string; lock?: string; emptyApi?: string[] }
  }
}

export interface OpenTarget {
  /**
   * `id` is the configured identity (--target-id, api.targetId, MONITORING_TARGET_ID), else the
   * base URL's; with a configured one, `urlId` is the URL's, which a lock written through this
   * URL before the identity was configured still carries (see assertLockTarget).
   */
  target: LockTarget & { embedded: boolean; urlId?: string }
  client: ApiClient
  lockPath: string
  /** The environment this run is for (`--env`): the lock must record it (see assertLockEnvironment). */
  environment?: string
  /**
   * The lock file is the one the environment's own `lock` setting names: a lock there that
   * records no environment (written before environments were declared) is taken as this
   * environment's, and records it at the next write.
   */
  lockNamedByEnvironment?: boolean
  /** Folder for local state (`.monitors/` beside the config). */
  stateDir: string
  close(): Promise<void>
}

/** Folder of local state beside the config: the embedded database, its key and lock, the apply lock. */
export const STATE_DIR = '.monitors'

class TargetError extends UserError {}

/**
 * Resolves the target: a flag wins over the config's `api` section, which wins over
 * MONITORING_API_URL / MONITORING_API_KEY / MONITORING_ACCOUNT_ID. With no URL anywhere, the
 * local server starts in-process on `.monitors/local.db` with its own lock file, and `notify`
 * says so in one line.
 */
export async function openTarget(
  project: ProjectLocation,
  flags: TargetFlags,
  notify: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenTarget> {
  const api = project.config.api ?? {}
  const pick = (...values: Array<string | undefined>) => values.find((v) => v !== undefined && v !== '')
  const local = chooseLocal(project, flags, env)
  const baseUrl = local ? undefined : pick(flags.apiUrl, api.baseUrl, env.MONITORING_API_URL)
  const apiKey = pick(flags.apiKey, api.apiKey, env.MONITORING_API_KEY)
  const accountId = pick(flags.accountId, api.accountId, env.MONITORING_ACCOUNT_ID)
  const timeoutMs = flags.timeout !== undefined ? Math.round(flags.timeout * 1000) : undefined
  if (timeoutMs !== undefined && !(timeoutMs > 0)) throw new TargetError(`--timeout must be a number of seconds above 0 (got ${flags.timeout}).`)
  if (flags.retries !== undefined && !(Number.isInteger(flags.retries) && flags.retries >= 0 && flags.retries <= 20)) {
    throw new TargetError(`--retries must be a whole number from 0 to 20 (got ${flags.retries}).`)
  }
  const retry = flags.retries !== undefined ? { retries: flags.retries } : undefined
  // one connection per operation in flight (opened as needed), else they queue
  const connections = Math.max(8, flags.concurrency ?? 0)
  const stateDir = join(project.rootDir, STATE_DIR)
  const explicitLock = flags.lock ? resolve(flags.lock) : undefined
  const environment = project.config.environment
  const scope = environment ? { environment: environment.name } : {}

  if (baseUrl) {
    if (!apiKey) {
      throw new TargetError(`No API key for ${redactUrl(baseUrl)}: set MONITORING_API_KEY or pass --api-key.`)
    }
    // list pages kept beside the compile cache, read again with If-None-Match (a remote target's only:
    // the embedded server's address changes at every start)
    const pageCacheDir = flags.cache === false || env.MONITORS_CACHE === '0' ? undefined : compileCacheDir(project.rootDir) || undefined
    const client = new ApiClient({ baseUrl, apiKey, accountId, timeoutMs, retry, connections, insecureHttp: flags.insecureHttp, pageCacheDir })
    const configuredId = pick(flags.targetId, api.targetId, env.MONITORING_TARGET_ID)
    if (configuredId !== undefined) checkTargetId(configuredId)
    const urlId = targetId(baseUrl)
    // an environment's lock: its own setting, else monitoring.<name>.lock.json beside the config
    const configDir = dirname(project.configFile)
    const environmentLock = environment?.lock !== undefined ? resolve(configDir, environment.lock) : undefined
    const lockPath = explicitLock ?? environmentLock ?? join(configDir, environment ? environmentLockName(environment.name) : LOCK_FILE_NAME)
    return {
      target: {
        id: configuredId ?? urlId,
        baseUrl: client.baseUrl,
        ...(accountId ? { accountId } : {}),
        embedded: false,
        ...(configuredId !== undefined && configuredId !== urlId ? { urlId } : {}),
      },
      client,
      lockPath,
      ...scope,
      ...(environmentLock !== undefined && lockPath === environmentLock ? { lockNamedByEnvironment: true } : {}),
      stateDir,
      close: () => client.close(),
    }
  }

  // one embedded service per environment, as two real targets never share one: its own
  // database and lock (`.monitors/local.<name>.db`, `.monitors/local.<name>.lock.json`)
  const localName = environment ? `local.${environment.name}` : 'local'
  const dbPath = join(stateDir, `${localName}.db`)
  const key = localApiKey(stateDir)
  let server
  try {
    // Loaded only when needed: a remote target never pays for the server's start-up.
    const { startLocalServer } = await import('../server/index.js')
    // The embedded server serves this process alone: no rate limit to pace against (a remote
    // server's limit still applies there), so an apply of thousands of checks is not throttled.
    server = await startLocalServer({ dbPath, apiKeys: [{ key, accountId: 'local' }], log: false, rateLimit: EMBEDDED_RATE_LIMIT })
  } catch (error) {
    throw nativeLoadError(error) ?? error
  }
  const shown = relative(process.cwd(), dbPath) || dbPath
  notify(`Using the embedded local server (${shown}); set MONITORING_API_URL to use a remote service.`)
  const client = new ApiClient({ baseUrl: server.url, apiKey: key, accountId: 'local', timeoutMs, retry, connections })
  return {
    target: { id: 'local', baseUrl: `embedded:${STATE_DIR}/${localName}.db`, accountId: 'local', embedded: true },
    client,
    lockPath: explicitLock ?? join(stateDir, `${localName}.lock.json`),
    ...scope,
    stateDir,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

/** `api.baseUrl: 'local'` in the config: the embedded local server, chosen on purpose. */
export const LOCAL_BASE_URL = 'local'

/** True when CI says this is a pipeline (`CI=true`, as GitHub Actions and most others set it). */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase()
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0'
}

const CHOOSE_LOCAL = "pass --local (or set api.baseUrl: 'local' in the config) to use the embedded local server on purpose"

/**
 * Whether the embedded local server is the target, or a refusal. A missing URL must never
 * quietly become a throwaway server in a pipeline: GitHub Actions turns an unset secret into an
 * empty string, and the apply would "succeed" against nothing. So an empty MONITORING_API_URL
 * (or --api-url) is refused, and so is no URL at all while CI is set, unless --local or
 * `api.baseUrl: 'local'` asks for the local server.
 */
/** Whether these flags and this environment name a remote target (not the embedded server); false when they name none or are refused. */
export function isRemoteTarget(project: ProjectLocation, flags: TargetFlags, env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return !chooseLocal(project, flags, env)
  } catch {
    return false
  }
}

function chooseLocal(project: ProjectLocation, flags: TargetFlags, env: NodeJS.ProcessEnv): boolean {
  const configured = project.config.api?.baseUrl
  assertEnvironmentApi(project, flags)
  if (flags.local) {
    if (flags.apiUrl !== undefined) throw new TargetError('--local and --api-url name two different targets: pass only one.')
    return true
  }
  if (flags.apiUrl !== undefined) {
    if (flags.apiUrl.trim() === '') throw new TargetError(`--api-url is empty: pass the Monitoring API's URL, or ${CHOOSE_LOCAL}.`)
    return false
  }
  if (configured === LOCAL_BASE_URL) return true
  if (configured !== undefined && configured !== '') return false
  if (env.MONITORING_API_URL !== undefined && env.MONITORING_API_URL.trim() === '') {
    throw new TargetError(`MONITORING_API_URL is set but empty (an unset secret in CI?): set it to the Monitoring API's URL, or ${CHOOSE_LOCAL}.`)
  }
  if (env.MONITORING_API_URL !== undefined) return false
  if (inCi(env)) {
    throw new TargetError(
      `No target: CI is set but MONITORING_API_URL is not (nor --api-url or api.baseUrl in ${relative(process.cwd(), project.configFile) || project.configFile}). Set MONITORING_API_URL, or ${CHOOSE_LOCAL}.`,
    )
  }
  return true
}

/**
 * An environment's `api` field written but empty (`baseUrl: process.env.STAGING_API_URL` with an
 * unset secret) is refused rather than filled from the config's `api` or MONITORING_*: that
 * could be another environment's target (production's URL in a staging job). A flag that gives
 * the value still wins.
 */
function assertEnvironmentApi(project: ProjectLocation, flags: TargetFlags): void {
  const environment = project.config.environment
  if (!environment?.emptyApi) return
  const given: Record<string, unknown> = {
    baseUrl: flags.local ? 'local' : flags.apiUrl,
    accountId: flags.accountId,
    apiKey: flags.apiKey,
    targetId: flags.targetId,
  }
  const empty = environment.emptyApi.filter((field) => given[field] === undefined)
  if (empty.length === 0) return
  const file = relative(process.cwd(), project.configFile) || project.configFile
  const fields = empty.map((field) => `environments.${environment.name}.api.${field}`).join(', ')
  throw new TargetError(
    `${file}: ${fields} ${empty.length === 1 ? 'is' : 'are'} empty (an unset secret in CI?): set ${empty.length === 1 ? 'it' : 'them'}, or leave ${empty.length === 1 ? 'it' : 'them'} out of the environment ` +
      `to use the config's api and MONITORING_*; an empty one is never filled from those, which could be another environment's target.`,
  )
}

/**
 * What a team installs when the SQLite driver is missing: better-sqlite3 is an optional
 * dependency of monitors-as-code (package.json `optionalDependencies`, the same range), so an
 * install whose native build failed (no prebuilt binary reachable, no compiler) still gives a
 * CLI that plans and applies against a remote service.
 */
export const SQLITE_DRIVER = 'better-sqlite3@^12.6.2'

/**
 * The local server (embedded or `monitors server` on a SQLite file) needs better-sqlite3 and its
 * native build, or Node.js's own SQLite (src/server/store/sqlite/driver.ts). When neither is
 * there, say what to install; when its build does not load (a
 * build for another Node.js version, a broken one), how to rebuild it; either instead of
 * reporting a bug in monitors. Undefined for any other error.
 */
export function nativeLoadError(error: unknown, command: 'embedded' | 'server' = 'embedded'): Error | undefined {
  if (!(error instanceof Error)) return undefined
  const code = (error as { code?: unknown }).code
  const text = `${error.message}`
  const missing = (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && /['"]better-sqlite3['"]/.test(text)
  const native =
    /better[-_]sqlite3/i.test(text) ||
    /bindings file|NODE_MODULE_VERSION|did not self-register|invalid ELF header|wrong ELF class|cannot open shared object|\.node\b/i.test(text) ||
    code === 'ERR_DLOPEN_FAILED'
  if (!native) return undefined
  const server = command === 'server' ? 'The local server' : 'The embedded local server'
  const remote = command === 'server' ? '' : ', or set MONITORING_API_URL to use a remote service'
  if (missing) {
    return new TargetError(
      `${server} needs the SQLite driver better-sqlite3, which is not installed (an optional dependency of monitors-as-code: its install failed or was left out). ` +
        `Install it with "npm install --save-dev ${SQLITE_DRIVER}" (it fetches a prebuilt binary, or compiles with python3, make and a C++ compiler where none fits), ` +
        `or run on Node.js 22.16 or newer, whose built-in SQLite is used without it${remote}` +
        `${command === 'server' ? '; or give --db a PostgreSQL URL, which needs no SQLite driver' : ''}.`,
    )
  }
  const first = text
    .split('\n')[0]
    .trim()
    .replace(/[\s.]*Tried:?$/, '')
  const fix = `Run "npm rebuild better-sqlite3" to build it for this Node.js (${process.version})`
  return new TargetError(`${server} could not load its SQLite driver (better-sqlite3: ${first}). ${fix}${remote}.`)
}

/** A configured target identity (the flag and the environment; the config's is checked when it loads). */
function checkTargetId(id: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/.test(id) || id === 'local') {
    throw new TargetError(
      `The target id ${JSON.stringify(id)} (--target-id, api.targetId or MONITORING_TARGET_ID) must be a name of letters, digits and . _ : / - (at most 200 characters), e.g. production; not "local", the embedded server's.`,
    )
  }
}

/** A base URL's identity: origin and path, without a trailing slash. */
export function targetId(baseUrl: string): string {
  try {
    const url = new URL(baseUrl)
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
  } catch {
    return baseUrl.replace(/\/+$/, '')
  }
}

/** The embedded server's API key: made once, kept in `.monitors/local-api-key` (mode 600). */
function localApiKey(stateDir: string): string {
  mkdirSync(stateDir, { recursive: true })
  const ignore = join(stateDir, '.gitignore')
  if (!existsSync(ignore)) writeFileSync(ignore, '# local state of the embedded server: never commit it\n*\n')
  const file = join(stateDir, 'local-api-key')
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim()
    if (key) return key
  }
  const key = `local_${randomBytes(24).toString('base64url')}`
  writeFileSync(file, `${key}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return key
}
