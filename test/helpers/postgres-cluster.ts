/**
 * A throwaway PostgreSQL cluster for tests and benches: initdb and pg_ctl from Debian's
 * `postgresql` package (or MONITORS_PG_BIN), in a temporary directory, on a free port of
 * 127.0.0.1, removed by `stop()`. initdb refuses to run as root, so as root the cluster is made
 * and run as the `postgres` user (the package creates it). Durability is traded for speed
 * (fsync off): the cluster lives for one test run.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface PostgresCluster {
  /** e.g. postgres://monitors@127.0.0.1:5599/name */
  url(database: string): string
  port: number
  /**
   * Stops the database server and keeps its data (`pg_ctl stop -m fast` by default: clients
   * are disconnected with 57P01, open transactions roll back), as an operator's restart does.
   */
  stopServer(mode?: 'fast' | 'immediate'): void
  /** Starts it again on the same port, with the same data; answers once it takes connections. */
  startServer(): void
  /** the server's log (pg_ctl -l): what it says of deadlocks and lock waits */
  logFile: string
  stop(): Promise<void>
}

/** The directory holding initdb and pg_ctl, or undefined when PostgreSQL is not installed. */
export function postgresBinDir(): string | undefined {
  const given = process.env.MONITORS_PG_BIN
  if (given) return existsSync(join(given, 'initdb')) ? given : undefined
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
    for (const version of versions) if (existsSync(join(debian, version, 'bin', 'initdb'))) return join(debian, version, 'bin')
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' })
  const found = which.status === 0 ? which.stdout.trim() : ''
  return found ? join(found, '..') : undefined
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** `settings`: more `-c name=value` of the server (a bench's logging, its max_connections). */
export async function startPostgresCluster(extra: string[] = []): Promise<PostgresCluster> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb found; Debian: apt-get install postgresql, or set MONITORS_PG_BIN)')
  const dir = mkdtempSync(join(tmpdir(), 'monitors-pg-'))
  const asRoot = process.getuid?.() === 0
  let asUser: string[] = []
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
    asUser = ['runuser', '-u', 'postgres', '--']
  }
  const run = (tool: string, args: string[]) => {
    const [command, ...rest] = [...asUser, join(bin, tool), ...args]
    const done = spawnSync(command, rest, { encoding: 'utf8', cwd: dir })
    if (done.status !== 0) throw new Error(`${tool} failed (${done.status}): ${done.stderr || done.stdout}`)
  }
  const data = join(dir, 'data')
  run('initdb', ['-D', data, '-U', 'monitors', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'])
  let port = 0
  const settings = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      `-c listen_addresses=127.0.0.1`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=400',
      '-c shared_buffers=64MB',
      ...extra.map((setting) => `-c ${setting}`),
    ].join(' ')
  const startServer = () => run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', settings()])
  for (let attempt = 1; ; attempt++) {
    port = await freePort()
    try {
      startServer()
      break
    } catch (error) {
      // the port was taken between finding it and binding it: another one
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true })
        throw error
      }
    }
  }
  let stopped = false
  return {
    port,
    url: (database) => `postgres://monitors@127.0.0.1:${port}/${database}`,
    stopServer: (mode = 'fast') => run('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '60']),
    startServer,
    logFile: join(dir, 'server.log'),
    async stop() {
      if (stopped) return
      stopped = true
      try {
        // (already stopped by stopServer: nothing to stop)
        if (existsSync(join(data, 'postmaster.pid'))) run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
