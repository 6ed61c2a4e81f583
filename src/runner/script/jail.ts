/**
 * The one containment of every script run (browser and multi-step checks' scripts and their
 * Chromium, Playwright check suites, API checks' setup and teardown scripts), made by the
 * kernel through Debian's bubblewrap (`bwrap`, the sandbox Flatpak runs its applications in),
 * in one call per process tree (docs/scripts.md, "The containment"):
 *
 * - a uid of its own: when this process is root, util-linux's `setpriv` drops to the run's uid and
 *   gid (contain.ts gives one per run), with no supplementary group and `no_new_privs`, before
 *   bwrap runs; bwrap then runs unprivileged, as Flatpak's does, and maps that uid to itself, so
 *   outside the sandbox the run's files and processes are that uid's, held by the kernel;
 * - its own user, PID, mount, network, IPC and UTS namespaces, and no new user namespace inside
 *   (`--disable-userns`): it sees its own processes only, `/proc` is its own;
 * - a read-only view of what it needs (the system's `/usr`, a few files of `/etc`, Node, the
 *   runtime, its bundle) and nothing else of the machine: the server's files, other runs'
 *   folders and artifacts are not in it; the root and `/dev` are read-only;
 * - its own `/tmp` (`/var/tmp` and `/run/lock` are it) and `/dev/shm`, memory of a fixed size
 *   (tmpfs), gone with the run; its run folders bound writable where the runner needs to read
 *   what it wrote;
 * - a network namespace with a loopback interface and nothing else: its one way out is the
 *   runner's egress proxy on a unix socket bound into the sandbox (egress.ts), which applies the
 *   private-target policy; UDP, WebRTC and listening sockets reach nothing outside;
 * - processes, file sizes and each process's memory bounded by rlimits set by util-linux's
 *   `prlimit` (RLIMIT_NPROC counts the run's own uid, RLIMIT_FSIZE every file it writes,
 *   RLIMIT_DATA what each process allocates); the runner's watchdog bounds the sum of their memory.
 *
 * Where this cannot be made (no bwrap, a kernel or container that refuses the namespaces, or
 * MONITORS_CONTAINMENT=off), `containment()` says so and why; the server says it at start and,
 * under the private-target policy `deny`, refuses to run scripts it cannot hold unless its
 * operator says otherwise (--uncontained-scripts).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { SETPRIV } from './contain.js'

export const BWRAP = '/usr/bin/bwrap'
export const PRLIMIT = '/usr/bin/prlimit'

/** MONITORS_CONTAINMENT=off: behave as a machine that cannot contain runs (an operator's choice, and how the tests see one). */
export const CONTAINMENT_VARIABLE = 'MONITORS_CONTAINMENT'

/** What this machine gives script runs. */
export interface Containment {
  /** bubblewrap runs here and the kernel gives it the namespaces: every run is contained */
  available: boolean
  /** why not, when not (for the start-up line and the errors) */
  problem: string | null
  /** bubblewrap's version, when available */
  version: string | null
  /** this process is root: a run with a uid of its own is started through setpriv */
  root: boolean
}

/** A sandbox to start one command in. */
export interface JailSpec {
  /** the run's own uid and gid (this process must be root); null: this process's user */
  user: { uid: number; gid: number } | null
  /** folders and files bound read-only, each at its own path */
  readOnly: readonly string[]
  /** folders bound writable, each at its own path (the runner reads what the run wrote there) */
  writable: readonly string[]
  /** memory folders (tmpfs) of a fixed size at these paths, mounted after the binds */
  tmpfs?: ReadonlyArray<{ path: string; bytes: number }>
  /** size of the run's /tmp (with /var/tmp and /run/lock) */
  tmpBytes: number
  /** size of the run's /dev/shm */
  shmBytes: number
  cwd: string
  /** RLIMIT_NPROC (counted by the run's own uid: applied only with `user`) */
  processes?: number
  /** RLIMIT_FSIZE: the largest file the run may write */
  fileBytes?: number
  /** RLIMIT_DATA: the memory each of its processes may allocate (its heap and private mappings) */
  dataBytes?: number
  /** The run's own /etc/passwd and /etc/group, naming its user (identityFiles): its home is found */
  identity?: { passwd: string; group: string }
}

/** The files of /etc a run may read (what Node, Chromium and TLS need; no file of the server's). */
const ETC = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'chromium',
  'chromium.d',
  'crypto-policies',
  'debian_version',
  'fonts',
  'gai.conf',
  'group',
  'host.conf',
  'hosts',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'machine-id',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'pki',
  'resolv.conf',
  'ssl',
]

/** The top folders of a merged /usr (links to usr/...) or, on an older layout, folders of their own. */
const TOP = ['bin', 'lib', 'lib32', 'lib64', 'libx32', 'sbin']

function systemView(identity: JailSpec['identity']): string[] {
  const args = ['--ro-bind', '/usr', '/usr']
  for (const name of TOP) {
    const at = `/${name}`
    let link: string | null = null
    try {
      const s = lstatSync(at)
      link = s.isSymbolicLink() ? path.relative('/', path.resolve('/', readlinkSync(at))) : null
      if (link === null && !s.isDirectory()) continue
    } catch {
      continue
    }
    args.push(...(link !== null ? ['--symlink', link, at] : ['--ro-bind', at, at]))
  }
  for (const name of ETC) {
    const own = identity && (name === 'passwd' || name === 'group') ? identity[name] : null
    args.push(own ? '--ro-bind' : '--ro-bind-try', own ?? `/etc/${name}`, `/etc/${name}`)
  }
  // the system's font cache: Chromium would otherwise scan the fonts again at every launch
  args.push('--ro-bind-try', '/var/cache/fontconfig', '/var/cache/fontconfig')
  return args
}

/**
 * The machine's /etc/passwd and /etc/group with the run's user added (`monitors-run`, its home
 * `home`), written in `dir`: a uid of a range no account names has no entry otherwise, and what
 * asks for its home (Node's os.homedir(), Chromium) would find none.
 */
export function identityFiles(dir: string, user: { uid: number; gid: number }, home: string): { passwd: string; group: string } {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').replace(/\n?$/, '\n')
    } catch {
      return ''
    }
  }
  const files = { passwd: path.join(dir, 'passwd'), group: path.join(dir, 'group') }
  writeFileSync(files.passwd, `${read('/etc/passwd')}monitors-run:x:${user.uid}:${user.gid}:a script run:${home}:/usr/sbin/nologin\n`, { mode: 0o644 })
  writeFileSync(files.group, `${read('/etc/group')}monitors-run:x:${user.gid}:\n`, { mode: 0o644 })
  return files
}

/** What is bound besides the spec's: Node itself, when it is not under /usr. */
function nodeView(): string[] {
  const exec = process.execPath
  if (exec.startsWith('/usr/')) return []
  // an installation of its own (/opt/node, a version manager's folder): its prefix, read-only
  const prefix = path.dirname(path.dirname(exec))
  return ['--ro-bind', prefix, prefix]
}

/**
 * The command line that starts `command args` in the sandbox `spec`: `prlimit` (the rlimits),
 * then, for a run with a user of its own, `setpriv` to that user, then `bwrap`.
 */
export function jailCommand(command: string, args: readonly string[], spec: JailSpec): [string, string[]] {
  const bwrap = [
    BWRAP,
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'monitors-run',
    ...systemView(spec.identity),
    ...nodeView(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(spec.shmBytes),
    '--tmpfs',
    '/dev/shm',
    '--size',
    String(spec.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--dir',
    '/var',
    '--symlink',
    '../tmp',
    '/var/tmp',
    '--dir',
    '/run',
    '--symlink',
    '../tmp',
    '/run/lock',
  ]
  for (const p of spec.readOnly) bwrap.push('--ro-bind', p, p)
  for (const p of spec.writable) bwrap.push('--bind', p, p)
  for (const t of spec.tmpfs ?? []) bwrap.push('--size', String(t.bytes), '--tmpfs', t.path)
  bwrap.push('--remount-ro', '/dev', '--remount-ro', '/', '--chdir', spec.cwd, '--', command, ...args)
  const dropped = spec.user ? [SETPRIV, `--reuid=${spec.user.uid}`, `--regid=${spec.user.gid}`, '--clear-groups', '--no-new-privs', '--', ...bwrap] : bwrap
  const limits = [
    ...(spec.user && spec.processes ? [`--nproc=${spec.processes}`] : []),
    ...(spec.fileBytes ? [`--fsize=${spec.fileBytes}`] : []),
    ...(spec.dataBytes ? [`--data=${spec.dataBytes}`] : []),
  ]
  const full = limits.length > 0 && existsSync(PRLIMIT) ? [PRLIMIT, ...limits, '--', ...dropped] : dropped
  return [full[0], full.slice(1)]
}

let probed: Containment | undefined

/**
 * What this machine gives script runs, tried once (a sandbox that runs `true`, as a run's would,
 * as the user runs get), then remembered. `uid`: the uid a run would get (root only).
 */
export function containment(uid: number | null = null): Containment {
  if (probed) return probed
  const root = process.getuid?.() === 0
  const off = process.env[CONTAINMENT_VARIABLE] === 'off'
  const base = { root, version: null }
  if (off) return (probed = { ...base, available: false, problem: `${CONTAINMENT_VARIABLE}=off turns it off` })
  if (process.platform !== 'linux') return (probed = { ...base, available: false, problem: 'it needs Linux (namespaces)' })
  if (!existsSync(BWRAP)) return (probed = { ...base, available: false, problem: `bubblewrap is not installed (${BWRAP}; Debian: apt-get install bubblewrap)` })
  if (root && !existsSync(SETPRIV)) return (probed = { ...base, available: false, problem: `util-linux's setpriv is missing (${SETPRIV})` })
  const version = /bubblewrap\s+(\S+)/.exec(spawnSync(BWRAP, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout ?? '')?.[1] ?? null
  const user = root ? { uid: uid ?? 65534, gid: uid ?? 65534 } : null
  const [command, args] = jailCommand('/bin/true', [], {
    user,
    readOnly: [],
    writable: [],
    tmpBytes: 1 << 20,
    shmBytes: 1 << 20,
    cwd: '/',
    processes: 64,
    fileBytes: 1 << 20,
  })
  const tried = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000, env: { PATH: '/usr/bin:/bin' } })
  if (tried.status !== 0) {
    const said = (tried.stderr || tried.error?.message || `exit ${tried.status ?? tried.signal}`).trim().split('\n').pop()
    return (probed = {
      ...base,
      version,
      available: false,
      problem: `the kernel refused bubblewrap its namespaces here (${said}): a container without CAP_SYS_ADMIN, or unprivileged user namespaces turned off`,
    })
  }
  return (probed = { ...base, version, available: true, problem: null })
}

/** Forgets what was probed (tests that change MONITORS_CONTAINMENT). */
export function forgetContainment(): void {
  probed = undefined
}

/** The port a run's bridge to the egress proxy listens on inside its network namespace (the namespace is the run's alone). */
export const EGRESS_PORT = 3128
/** The proxy a run's clients are given inside its network namespace. */
export const EGRESS_PROXY = `http://127.0.0.1:${EGRESS_PORT}`

/**
 * A bridge, run by Node inside a sandbox: `node bridge.cjs PORT=SOCKET… -- COMMAND ARGS…`
 * listens on 127.0.0.1:PORT of the run's network namespace for each pair and carries each
 * connection to the unix socket SOCKET (bound into the sandbox, served by the runner), then runs
 * COMMAND with the bridge's standard streams and its descriptors 3 and 4 (Chromium's pipes to
 * Playwright), ending with its exit code.
 */
export const BRIDGE_SOURCE = `'use strict'
const net = require('node:net')
const fs = require('node:fs')
const { spawn } = require('node:child_process')
const argv = process.argv.slice(2)
const at = argv.indexOf('--')
if (at < 1 || at === argv.length - 1) { console.error('usage: bridge PORT=SOCKET... -- COMMAND ARGS'); process.exit(2) }
const pairs = argv.slice(0, at).map((p) => { const i = p.indexOf('='); return [Number(p.slice(0, i)), p.slice(i + 1)] })
const [command, ...args] = argv.slice(at + 1)
let listening = 0
for (const [port, socketPath] of pairs) {
  const server = net.createServer((client) => {
    const up = net.connect(socketPath)
    client.pipe(up)
    up.pipe(client)
    const end = () => { client.destroy(); up.destroy() }
    client.on('error', end)
    up.on('error', end)
    client.on('close', end)
    up.on('close', end)
  })
  server.on('error', (error) => { console.error('the network bridge could not listen: ' + error.message); process.exit(1) })
  server.listen(port, '127.0.0.1', () => { if (++listening === pairs.length) start() })
}
function start() {
  const open = (fd) => { try { fs.fstatSync(fd); return fd } catch { return 'ignore' } }
  const child = spawn(command, args, { stdio: [open(0), open(1), open(2), open(3), open(4)] })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('error', (error) => { console.error(error.message); process.exit(1) })
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}
`
