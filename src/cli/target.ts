import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ApiClient } from '../api/client.js'
import { redactUrl } from '../api/redact.js'
import { LOCK_FILE_NAME, type LockTarget } from '../apply/lock.js'

/** Where the CLI sends requests, resolved from flags, the config and the environment. */
export interface TargetFlags {
  apiUrl?: string
  apiKey?: string
  accountId?: string
  /** Lock file path (relative to the working directory). */
  lock?: string
  /** Per-request timeout in seconds. */
  timeout?: number
  /** Retries of a request after a 5xx, a timeout or a lost connection. */
  retries?: number
  /** Allow plain http:// to a host that is not this machine. */
  insecureHttp?: boolean
}

export interface ProjectLocation {
  configFile: string
  rootDir: string
  config: { api?: { baseUrl?: string; accountId?: string; apiKey?: string } }
}

export interface OpenTarget {
  target: LockTarget & { embedded: boolean }
  client: ApiClient
  lockPath: string
  /** Folder for local state (`.monitors/` beside the config). */
  stateDir: string
  close(): Promise<void>
}

/** Folder of local state beside the config: the embedded database, its key and lock, the apply lock. */
export const STATE_DIR = '.monitors'

class TargetError extends Error {
  readonly userError = true as const
}

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
  const baseUrl = pick(flags.apiUrl, api.baseUrl, env.MONITORING_API_URL)
  const apiKey = pick(flags.apiKey, api.apiKey, env.MONITORING_API_KEY)
  const accountId = pick(flags.accountId, api.accountId, env.MONITORING_ACCOUNT_ID)
  const timeoutMs = flags.timeout !== undefined ? Math.round(flags.timeout * 1000) : undefined
  if (timeoutMs !== undefined && !(timeoutMs > 0)) throw new TargetError(`--timeout must be a number of seconds above 0 (got ${flags.timeout}).`)
  if (flags.retries !== undefined && !(Number.isInteger(flags.retries) && flags.retries >= 0 && flags.retries <= 20)) {
    throw new TargetError(`--retries must be a whole number from 0 to 20 (got ${flags.retries}).`)
  }
  const retry = flags.retries !== undefined ? { retries: flags.retries } : undefined
  const stateDir = join(project.rootDir, STATE_DIR)
  const explicitLock = flags.lock ? resolve(flags.lock) : undefined

  if (baseUrl) {
    if (!apiKey) {
      throw new TargetError(`No API key for ${redactUrl(baseUrl)}: set MONITORING_API_KEY or pass --api-key.`)
    }
    const client = new ApiClient({ baseUrl, apiKey, accountId, timeoutMs, retry, insecureHttp: flags.insecureHttp })
    return {
      target: { id: targetId(baseUrl), baseUrl: client.baseUrl, ...(accountId ? { accountId } : {}), embedded: false },
      client,
      lockPath: explicitLock ?? join(dirname(project.configFile), LOCK_FILE_NAME),
      stateDir,
      close: () => client.close(),
    }
  }

  const dbPath = join(stateDir, 'local.db')
  const key = localApiKey(stateDir)
  // Loaded only when needed: a remote target never pays for the server's start-up.
  const { startLocalServer } = await import('../server/index.js')
  const server = await startLocalServer({ dbPath, apiKeys: [{ key, accountId: 'local' }], log: false })
  const shown = relative(process.cwd(), dbPath) || dbPath
  notify(`Using the embedded local server (${shown}); set MONITORING_API_URL to use a remote service.`)
  const client = new ApiClient({ baseUrl: server.url, apiKey: key, accountId: 'local', timeoutMs, retry })
  return {
    target: { id: 'local', baseUrl: `embedded:${STATE_DIR}/local.db`, accountId: 'local', embedded: true },
    client,
    lockPath: explicitLock ?? join(stateDir, 'local.lock.json'),
    stateDir,
    close: async () => {
      await client.close()
      await server.close()
    },
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
