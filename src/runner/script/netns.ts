/**
 * A network of its own for a Playwright check suite's run under the private-target policy
 * `deny` (docs/scripts.md, "The network under deny"). The run's processes (started as root
 * through util-linux's `unshare --net`, then setpriv to the run's user) live in a new network
 * namespace holding a loopback interface and nothing else: no route leads out of it. The one
 * way out is a bridge, run as the run's user inside the namespace, which listens on
 * 127.0.0.1:BRIDGE_PORT there and carries each connection to a unix socket in the run's folder
 * (a path on disk, which network namespaces do not separate), where the runner's egress proxy
 * (egress.ts) opens the target under the policy. The suite's browsers and API requests are
 * configured with that proxy; anything else the run tries (Node's own `fetch`, a raw socket, a
 * UDP datagram, another browser without the proxy) reaches nothing.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { SETPRIV } from './contain.js'

const UNSHARE = '/usr/bin/unshare'
const IP = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].find((p) => existsSync(p)) ?? '/usr/sbin/ip'

/** The port the bridge listens on inside a run's namespace (the namespace is the run's alone). */
export const BRIDGE_PORT = 3128

/** The proxy a suite's browsers and API requests are given inside its namespace. */
export const BRIDGE_PROXY = `http://127.0.0.1:${BRIDGE_PORT}`

let probed: boolean | undefined

/**
 * Whether runs can get a network of their own here: this process is root, `unshare` and `setpriv`
 * (util-linux: the run enters the namespace as root, then becomes its user) and `ip` (iproute2)
 * are there, and the kernel lets this process make a network namespace (a container without
 * CAP_SYS_ADMIN does not). Tried once, then remembered.
 */
export function networkNamespaces(): boolean {
  if (probed === undefined) {
    probed = process.getuid?.() === 0 && existsSync(UNSHARE) && existsSync(SETPRIV) && existsSync(IP) &&
      spawnSync(UNSHARE, ['--net', '--', IP, 'link', 'set', 'lo', 'up'], { stdio: 'ignore', timeout: 10_000 }).status === 0
  }
  return probed
}

/**
 * `command args…` started in a new network namespace whose loopback is up (as root: `ip` needs
 * it; `command` is what drops to the run's user).
 */
export function inNetworkNamespace(command: string, args: string[]): [string, string[]] {
  return [UNSHARE, ['--net', '--', '/bin/sh', '-c', `${IP} link set lo up && exec "$@"`, 'sh', command, ...args]]
}

/**
 * The bridge, run by Node as the run's user inside the namespace: `node bridge.cjs SOCKET --
 * COMMAND ARGS…` listens on 127.0.0.1:BRIDGE_PORT, carries each connection to SOCKET, and once
 * listening runs COMMAND (so the proxy is there before any browser), ending with its exit code.
 */
export const BRIDGE_SOURCE = `'use strict'
const net = require('node:net')
const { spawn } = require('node:child_process')
const [socketPath, separator, command, ...args] = process.argv.slice(2)
if (separator !== '--' || !command) { console.error('usage: bridge SOCKET -- COMMAND ARGS'); process.exit(2) }
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
server.listen(${BRIDGE_PORT}, '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('error', (error) => { console.error(error.message); process.exit(1) })
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
})
server.on('error', (error) => { console.error('the network bridge could not listen: ' + error.message); process.exit(1) })
`
