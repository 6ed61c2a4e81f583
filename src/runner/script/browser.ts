/**
 * The Chromium of a browser check's run, launched by the runtime's own Playwright
 * (`launchServer`) in this process and reached by the script through the filtering proxy
 * (proxy.ts). Contained (jail.ts), Chromium runs in a sandbox of the run's own: its user, its
 * namespaces, a read-only view, its own /tmp and /dev/shm, and a network whose one way out is a
 * bridge (jail.ts's BRIDGE_SOURCE) to the run's egress proxy, listening there on the port the
 * proxy has on 127.0.0.1 here: the browser is launched with that proxy, which also carries the API
 * requests Playwright makes for its pages in this process; its profile and downloads are in the
 * run's browser home. Playwright
 * starts it through a small shell wrapper that puts its profile folder in that home and execs
 * the sandbox. Uncontained, Chromium runs as this process's user, behind the egress proxy under
 * the private-target policy `deny` only.
 */
import { chmodSync, chownSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { TargetPolicy } from '../targets.js'
import { startEgress, type EgressProxy } from './egress.js'
import { BRIDGE_SOURCE, jailCommand, type JailSpec } from './jail.js'
import { nativeImport } from './native-import.js'
import { startProxy, type BrowserProxy } from './proxy.js'
import { resolveInRuntime } from './runtimes.js'
import { killTree } from './sandbox.js'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
/** WebRTC may use no UDP outside the proxy. */
const NO_UDP = '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'
/** The port the script reaches its browser's filtering proxy on, inside its own network (a bridge to a unix socket). */
export const BROWSER_BRIDGE_PORT = 3129

export interface BrowserHandle {
  /** The filtering proxy's endpoint, as the script connects to it. */
  endpoint: string
  pid: number | undefined
  proxy: BrowserProxy
  /** The browser's way out: the run's own egress proxy when contained, one of its own under `deny`, else null. */
  egress: EgressProxy | null
  close(): Promise<void>
}

/** What a contained browser needs of its run: the sandbox's user and limits, and the sockets in the run's folder. */
export interface BrowserJail {
  spec: Omit<JailSpec, 'cwd' | 'readOnly' | 'writable'>
  /** The run's folder, bound read-only (the bridge's source, the sockets). */
  runDir: string
  /** The run's egress proxy and its socket. */
  egress: EgressProxy
  egressSocket: string
  /** Where the filtering proxy listens for the script. */
  browserSocket: string
}

export interface BrowserLaunch {
  runtimeDir: string
  chromiumPath: string
  /** The browser's home and temporary folder (written by it; its profile and downloads, contained). */
  home: string
  runDir: string
  timeoutMs: number
  policy: TargetPolicy
  jail: BrowserJail | null
}

interface LaunchServer {
  launchServer(options: Record<string, unknown>): Promise<{ wsEndpoint(): string; process(): { pid?: number }; kill(): Promise<void>; close(): Promise<void> }>
}

async function chromiumOf(runtimeDir: string): Promise<LaunchServer> {
  const entry = resolveInRuntime(runtimeDir, 'playwright-core')
  if (!entry) throw new Error(`the runtime in ${runtimeDir} has no playwright-core: prepare it again`)
  const mod = (await nativeImport(pathToFileURL(entry).href)) as { chromium?: unknown; default?: { chromium?: unknown } }
  return (mod.chromium ?? mod.default?.chromium) as LaunchServer
}

/** A word for the shell, quoted. */
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`
}

/**
 * The wrapper Playwright starts as Chromium: it moves the profile folder Playwright names
 * (`--user-data-dir=`, made in this process's temporary folder, outside the sandbox) into the
 * browser's home, then execs the sandbox (the bridge, then Chromium with the arguments).
 */
function wrapper(launch: BrowserLaunch, jail: BrowserJail): string {
  const bridge = path.join(launch.runDir, 'bridge.cjs')
  writeFileSync(bridge, BRIDGE_SOURCE)
  const readOnly = [launch.runDir, ...(launch.chromiumPath.startsWith('/usr/') ? [] : [path.dirname(launch.chromiumPath)])]
  // its proxy is 127.0.0.1:PORT, the egress proxy's port in this process: inside its sandbox the bridge listens there
  const [command, args] = jailCommand(process.execPath, [bridge, `${jail.egress.port}=${jail.egressSocket}`, '--', launch.chromiumPath], {
    ...jail.spec,
    readOnly,
    writable: [launch.home],
    cwd: launch.home,
  })
  const file = path.join(launch.runDir, 'chromium.sh')
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'n=$#',
      'for a; do',
      `  case "$a" in --user-data-dir=*) a=${quoted(`--user-data-dir=${path.join(launch.home, 'profile')}`)};; esac`,
      '  set -- "$@" "$a"',
      'done',
      'shift $n',
      `exec ${[command, ...args].map(quoted).join(' ')} "$@"`,
      '',
    ].join('\n'),
  )
  chmodSync(file, 0o755)
  return file
}

/** Launches the run's Chromium and its filtering proxy (closed together by `close`). */
export async function launchBrowser(launch: BrowserLaunch): Promise<BrowserHandle> {
  const chromium = await chromiumOf(launch.runtimeDir)
  const { jail, home } = launch
  // contained: its one way out, the run's egress proxy through its bridge; else under `deny` an
  // egress proxy of its own on 127.0.0.1; WebRTC's UDP is off, so it cannot go around it
  const egress = jail ? null : launch.policy.privateTargets === 'deny' ? await startEgress(launch.policy) : null
  const proxyServer = jail ? jail.egress.url : (egress?.url ?? null)
  const server = await chromium
    .launchServer({
      executablePath: jail ? wrapper(launch, jail) : launch.chromiumPath,
      args: proxyServer ? [...CHROMIUM_ARGS, NO_UDP] : CHROMIUM_ARGS,
      ...(proxyServer ? { proxy: { server: proxyServer } } : {}),
      ...(jail ? { downloadsPath: path.join(home, 'downloads') } : {}),
      headless: true,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: Math.max(1000, launch.timeoutMs),
      // the browser gets none of the server's environment (its keys, its database URL)
      // (MONITORS_RUN names the run the browser belongs to, for whoever looks at the process list)
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        TMPDIR: home,
        XDG_CONFIG_HOME: home,
        XDG_CACHE_HOME: home,
        LANG: 'C.UTF-8',
        MONITORS_RUN: launch.runDir,
      },
    })
    .catch(async (error: unknown) => {
      await egress?.close()
      throw error
    })
  const pid = server.process().pid
  let proxy: BrowserProxy
  try {
    proxy = await startProxy(
      server.wsEndpoint(),
      { contextProxies: !proxyServer },
      jail ? { socket: jail.browserSocket, endpointHost: `127.0.0.1:${BROWSER_BRIDGE_PORT}` } : {},
    )
    // only the run's user may connect to it
    if (jail?.spec.user) {
      chownSync(jail.browserSocket, jail.spec.user.uid, jail.spec.user.gid)
      chmodSync(jail.browserSocket, 0o600)
    }
  } catch (error) {
    await server.kill().catch(() => undefined)
    await egress?.close()
    throw error
  }
  return {
    endpoint: proxy.endpoint,
    pid,
    proxy,
    egress: jail ? jail.egress : egress,
    close: async () => {
      await proxy.close().catch(() => undefined)
      await server.kill().catch(() => undefined)
      killTree(pid)
      await egress?.close()
    },
  }
}
