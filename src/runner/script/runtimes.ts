/**
 * Preparing runtimes: a server or an agent installs a runtime's declared packages once, from
 * the npm registry, into a cache folder of its own (`<cache>/<runtimeId>/node_modules`), and
 * runs scripts against that folder. A runtime is prepared when its folder holds a marker that
 * names exactly the packages the declaration (src/schema/runtimes.ts) gives today.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_RUNTIME_ID, findRuntime, RUNTIMES, type Runtime } from '../../schema/runtimes.js'
import { UserError } from '../../errors.js'
import { alive } from './sandbox.js'
import { childEnvironment } from '../child-env.js'
import { isoNow, systemClock } from '../clock.js'

const MARKER = '.monitors-runtime.json'

/** Where runtimes are prepared when no folder is given: `$MONITORS_RUNTIME_CACHE`, else `~/.cache/monitors/runtimes`. */
export function defaultRuntimeCache(): string {
  return process.env.MONITORS_RUNTIME_CACHE || join(homedir(), '.cache', 'monitors', 'runtimes')
}

export interface RuntimeState {
  id: string
  stage: Runtime['stage']
  prepared: boolean
  /** The runtime's folder (prepared or not). */
  dir: string
  /** Why it is not prepared; null when it is. */
  missing: string | null
}

function markerMatches(dir: string, runtime: Runtime): boolean {
  try {
    const marker = JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as { id?: string; dependencies?: Record<string, string> }
    return marker.id === runtime.name && JSON.stringify(marker.dependencies) === JSON.stringify(runtime.dependencies)
  } catch {
    return false
  }
}

/** A word of a shell command as typed: quoted when it holds anything but plain path characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/** The command that prepares runtime `id` in `cacheDir`: what a message about a runtime not prepared tells to run. */
export function prepareCommand(id: string, cacheDir: string = defaultRuntimeCache()): string {
  return `monitors runtimes prepare ${shellWord(id)} --cache-dir ${shellWord(cacheDir)}`
}

/** Why runtime `id` can never be prepared or run (unknown, or removed); null when it can. */
export function runtimeRefusal(id: string): string | null {
  const runtime = findRuntime(id)
  if (!runtime) return `runtime ${id} does not exist (runtimes: ${RUNTIMES.map((r) => r.name).join(', ')})`
  if (runtime.stage === 'REMOVED') return `runtime ${id} was removed on ${runtime.runtimeEndOfLife}: choose runtime ${DEFAULT_RUNTIME_ID}`
  return null
}

/** Whether `id` is prepared in `cacheDir`, and if not, why. */
export function runtimeState(id: string, cacheDir: string = defaultRuntimeCache()): RuntimeState {
  const runtime = findRuntime(id)
  const dir = join(cacheDir, id)
  if (!runtime)
    return { id, stage: 'REMOVED', prepared: false, dir, missing: `runtime ${id} does not exist (runtimes: ${RUNTIMES.map((r) => r.name).join(', ')})` }
  if (!existsSync(join(dir, MARKER))) {
    return {
      id,
      stage: runtime.stage,
      prepared: false,
      dir,
      missing: `runtime ${id} is not prepared here: its packages are not in ${dir}; prepare it with: ${prepareCommand(id, cacheDir)}`,
    }
  }
  if (!markerMatches(dir, runtime)) {
    return {
      id,
      stage: runtime.stage,
      prepared: false,
      dir,
      missing: `runtime ${id} in ${dir} was prepared with other packages than it declares now; prepare it again with: ${prepareCommand(id, cacheDir)} --force`,
    }
  }
  return { id, stage: runtime.stage, prepared: true, dir, missing: null }
}

/** Every runtime and whether it is prepared, newest first (what a server says when it starts). */
export function runtimeStates(cacheDir: string = defaultRuntimeCache()): RuntimeState[] {
  return RUNTIMES.map((r) => runtimeState(r.name, cacheDir))
}

/**
 * One line for a server's or agent's start-up: which runtimes are prepared in `cacheDir`, and
 * the command that prepares the others (browser and multi-step runs on them fail until then).
 */
export function runtimesSummary(cacheDir: string = defaultRuntimeCache()): string {
  const states = runtimeStates(cacheDir).filter((s) => s.stage !== 'REMOVED')
  const prepared = states.filter((s) => s.prepared).map((s) => s.id)
  const missing = states.filter((s) => !s.prepared)
  const head = `Script runtimes in ${cacheDir}`
  if (missing.length === 0) return `${head}: ${prepared.join(', ')} prepared`
  const first = missing.find((s) => s.id === DEFAULT_RUNTIME_ID) ?? missing[0]
  const stale = first.missing?.includes('other packages') ? ' --force' : ''
  const which = prepared.length === 0 ? 'none prepared' : `${prepared.join(', ')} prepared, ${missing.map((s) => s.id).join(', ')} not`
  return `${head}: ${which}; browser and multi-step checks on a runtime not prepared fail until it is: ${prepareCommand(first.id, cacheDir)}${stale}`
}

export interface PrepareOptions {
  cacheDir?: string
  /** Install from npm's cache only (`npm install --offline`): no network. */
  offline?: boolean
  /** The npm command (default `npm` from PATH). */
  npm?: string
  /** Extra arguments for npm (a `--registry`, a `--cache`). */
  npmArgs?: string[]
  /**
   * A package-lock.json to take every version from (the runtime's packages at their declared
   * versions and all they depend on): with `offline`, npm installs from its cache alone, as
   * after `npm ci` of the project whose lock it is. Without it, npm resolves the packages'
   * own dependencies from the registry.
   */
  fromLock?: string
  /** Prepare again even when the marker matches. */
  force?: boolean
  /** Gives up after this long (default 10 minutes). */
  timeoutMs?: number
  /** Told each step as a line (waiting for another process, running npm). */
  progress?: (line: string) => void
}

/** A runtime that cannot be prepared, and why (npm's own words when npm failed): a user's problem, never shown with a stack. */
export class RuntimePrepareError extends UserError {
  constructor(message: string) {
    super(message)
    this.name = 'RuntimePrepareError'
  }
}

/**
 * Installs runtime `id`'s packages into `<cacheDir>/<id>`: npm install of exactly the declared
 * versions, without their install scripts, into a fresh folder that replaces the old one only
 * once it is complete (a failed or interrupted preparation leaves no half runtime behind).
 */
export async function prepareRuntime(id: string, options: PrepareOptions = {}): Promise<RuntimeState> {
  const cacheDir = options.cacheDir ?? defaultRuntimeCache()
  const runtime = findRuntime(id)
  const refusal = runtimeRefusal(id)
  if (!runtime || refusal) throw new RuntimePrepareError(refusal ?? `runtime ${id} does not exist`)
  if (runtimeState(id, cacheDir).prepared && !options.force) return runtimeState(id, cacheDir)
  mkdirSync(cacheDir, { recursive: true })
  // one preparation at a time per runtime and cache, across processes: a second one waits, then
  // finds the runtime prepared (and never replaces a folder runs are reading from)
  const lock = join(cacheDir, `.${id}.lock`)
  const waiting = () => options.progress?.(`another process is preparing runtime ${id} in ${cacheDir} (${lock}): waiting for it`)
  return withLock(lock, options.timeoutMs ?? 600_000, waiting, async () => {
    const state = runtimeState(id, cacheDir)
    if (state.prepared && !options.force) return state
    return install(id, runtime, cacheDir, options)
  })
}

async function withLock<T>(lock: string, timeoutMs: number, waiting: () => void, fn: () => Promise<T>): Promise<T> {
  const start = performance.now()
  for (let round = 0; ; round++) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      let holder = 0
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'))
      } catch {
        holder = 0
      }
      if (holder > 0 && !alive(holder)) {
        rmSync(lock, { recursive: true, force: true })
        continue
      }
      if (round === 0) waiting()
      if (performance.now() - start > timeoutMs)
        throw new RuntimePrepareError(`another process has been preparing this runtime for over ${Math.round(timeoutMs / 1000)} s (${lock})`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

async function install(id: string, runtime: Runtime, cacheDir: string, options: PrepareOptions): Promise<RuntimeState> {
  const work = join(cacheDir, `.${id}.${process.pid}.${randomUUID().slice(0, 8)}`)
  mkdirSync(work, { recursive: true })
  try {
    writeFileSync(
      join(work, 'package.json'),
      `${JSON.stringify({ name: `monitors-runtime-${id.replace('.', '-')}`, private: true, dependencies: runtime.dependencies }, null, 2)}\n`,
    )
    if (options.fromLock) {
      const registry = (await npmOutput(options.npm ?? 'npm', ['config', 'get', 'registry'], work)).trim()
      writeFileSync(
        join(work, 'package-lock.json'),
        `${JSON.stringify(subLock(options.fromLock, runtime, `monitors-runtime-${id.replace('.', '-')}`, registry), null, 2)}\n`,
      )
    }
    const args = [
      options.fromLock ? 'ci' : 'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--omit=dev',
      '--no-save',
      '--loglevel=error',
      ...(options.offline ? ['--offline'] : []),
      ...(options.npmArgs ?? []),
    ]
    options.progress?.(
      `npm ${args.join(' ')} (${Object.keys(runtime.dependencies).length} packages${options.fromLock ? `, versions from ${options.fromLock}` : ''})`,
    )
    await runNpm(options.npm ?? 'npm', args, work, options.timeoutMs ?? 600_000, id)
    const require = createRequire(join(work, 'package.json'))
    for (const name of Object.keys(runtime.dependencies)) {
      try {
        require.resolve(`${name}/package.json`)
      } catch {
        throw new RuntimePrepareError(`preparing runtime ${id}: npm installed no ${name}`)
      }
    }
    writeFileSync(join(work, MARKER), `${JSON.stringify({ id, dependencies: runtime.dependencies, preparedAt: isoNow(systemClock) }, null, 2)}\n`)
    const dir = join(cacheDir, id)
    const old = `${dir}.old.${process.pid}.${randomUUID().slice(0, 8)}`
    try {
      if (existsSync(dir)) renameSync(dir, old)
      renameSync(work, dir)
    } catch (error) {
      // another process prepared it meanwhile: theirs is as good as ours
      if (!runtimeState(id, cacheDir).prepared) throw error
    }
    rmSync(old, { recursive: true, force: true })
    return runtimeState(id, cacheDir)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

interface LockEntry {
  version?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  [key: string]: unknown
}

/**
 * The part of a package-lock.json (v2/v3) a runtime needs: its declared packages, at the
 * declared versions, and everything they depend on, at the same places in node_modules.
 */
export function subLock(lockPath: string, runtime: Runtime, name: string, registry: string): unknown {
  let lock: { lockfileVersion?: number; packages?: Record<string, LockEntry> }
  try {
    lock = JSON.parse(readFileSync(lockPath, 'utf8'))
  } catch (error) {
    throw new RuntimePrepareError(`cannot read the lock ${lockPath}: ${(error as Error).message}`)
  }
  const packages = lock?.packages
  if (!packages) throw new RuntimePrepareError(`${lockPath} is not a package-lock.json of version 2 or 3`)
  const out: Record<string, LockEntry> = { '': { name, dependencies: runtime.dependencies } }
  const locate = (from: string, dep: string): string | null => {
    for (let dir = from; ; ) {
      const candidate = `${dir ? `${dir}/` : ''}node_modules/${dep}`
      if (packages[candidate]) return candidate
      if (!dir) return null
      const at = dir.lastIndexOf('/node_modules/')
      dir = at < 0 ? '' : dir.slice(0, at)
    }
  }
  const visit = (location: string) => {
    if (out[location]) return
    const entry = { ...packages[location] }
    for (const flag of ['dev', 'devOptional', 'peer', 'extraneous']) delete entry[flag]
    // a lock written without `resolved` makes npm ask the registry where each tarball is;
    // with it (and the integrity), npm takes the tarball from its cache
    const pkg = location.slice(location.lastIndexOf('node_modules/') + 13)
    if (!entry.resolved && entry.version && !entry.link)
      entry.resolved = `${registry.replace(/\/?$/, '/')}${pkg}/-/${pkg.split('/').pop()}-${entry.version}.tgz`
    out[location] = entry
    for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      const found = locate(location, dep)
      if (found) visit(found)
    }
  }
  for (const [dep, version] of Object.entries(runtime.dependencies)) {
    const location = `node_modules/${dep}`
    if (packages[location]?.version !== version) {
      throw new RuntimePrepareError(
        `runtime ${runtime.name} needs ${dep}@${version}, which ${lockPath} does not hold (it has ${packages[location]?.version ?? 'none'}): prepare it from the registry`,
      )
    }
    visit(location)
  }
  return { name, lockfileVersion: 3, requires: true, packages: out }
}

function npmOutput(npm: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(npm, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'], env: childEnvironment() })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new RuntimePrepareError(`npm ${args.join(' ')} failed (exit ${code})`))))
  })
}

function runNpm(npm: string, args: string[], cwd: string, timeoutMs: number, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(npm, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: childEnvironment({ npm_config_update_notifier: 'false' }) })
    let output = ''
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(new RuntimePrepareError(`preparing runtime ${id}: could not run ${npm}: ${error.message}`))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else
        reject(
          new RuntimePrepareError(
            `preparing runtime ${id}: npm ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${output.trim().split('\n').slice(-8).join('\n')}`,
          ),
        )
    })
  })
}

/** The absolute file a prepared runtime resolves `specifier` to (CommonJS resolution), or null. */
export function resolveInRuntime(runtimeDir: string, specifier: string): string | null {
  try {
    return createRequire(join(runtimeDir, 'package.json')).resolve(specifier)
  } catch {
    return null
  }
}
