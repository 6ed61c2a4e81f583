/**
 * The filtering proxy between the sandboxed script and its browser. The browser runs in the
 * trusted parent's user with the parent's file access, so a Playwright client talking to it
 * directly could make it read the server's files: `page.goto('file:///…')`, an upload of a
 * server path (`setInputFiles` with `localPaths` / `localDirectory`), a download saved to a
 * server path (`saveAs`), a raw CDP session (whose `Page.navigate` and `DOM.setFileInputFiles`
 * do the same). The proxy forwards Playwright's protocol messages and refuses those, answering
 * the call with an error the script sees; every refusal is reported as a sandbox violation.
 *
 * The endpoint has a random path and listens on 127.0.0.1 only (a contained run's: on a unix
 * socket in the run's folder); one client may connect.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer, type RawData } from 'ws'

export interface ProxyViolation {
  method: string
  detail: string
}

const REFUSED_METHODS = new Set([
  'newCDPSession',
  'newBrowserCDPSession',
  'startServer',
  'stopServer',
  'saveAs',
  'launch',
  'launchPersistentContext',
  'launchServer',
  'connect',
  'connectOverCDP',
  'harOpen',
  'harLookup',
  'harUnzip',
  'zip',
])

const WEB_URL = /^(https?:|about:|data:)/i

export interface ProxyRules {
  /**
   * Whether a context may name its own proxy (`browser.newContext({ proxy })`); not under the
   * private-target policy `deny`, where the browser's connections must go out through the egress proxy.
   */
  contextProxies?: boolean
}

/** Why the proxy refuses a message of the script (null: forward it). */
export function refusal(message: { method?: unknown; params?: unknown; guid?: unknown }, rules: ProxyRules = {}): string | null {
  const method = typeof message.method === 'string' ? message.method : ''
  const params = (message.params ?? {}) as Record<string, unknown>
  if (REFUSED_METHODS.has(method)) return `${method} is not available to scripts`
  if (rules.contextProxies === false && params.proxy !== undefined && params.proxy !== null) {
    return `${method} with a proxy of its own is refused: the browser's connections go out under the private-target policy (--private-targets deny)`
  }
  if (typeof message.guid === 'string' && message.guid.startsWith('localUtils')) return `${method} is not available to scripts`
  if (method === 'goto' && typeof params.url === 'string' && !WEB_URL.test(params.url.trim())) {
    return `navigation to ${params.url.slice(0, 200)} refused: scripts may open http(s):, about: and data: URLs only`
  }
  if (method === 'setInputFiles' && (params.localPaths !== undefined || params.localDirectory !== undefined)) {
    return "uploading files by their path on the server is refused: pass the files' contents (or paths the script itself wrote)"
  }
  return null
}

export interface BrowserProxy {
  endpoint: string
  violations: ProxyViolation[]
  close(): Promise<void>
}

/**
 * Starts a proxy to the browser server at `upstream` (a Playwright `launchServer` endpoint), on
 * 127.0.0.1 or, for a contained run, on the unix socket `at.socket` (the run reaches it through
 * a bridge in its own network, `at.endpointHost`: its endpoint then names that address).
 */
export async function startProxy(upstream: string, rules: ProxyRules = {}, at: { socket?: string; endpointHost?: string } = {}): Promise<BrowserProxy> {
  const path = `/${randomBytes(16).toString('hex')}`
  const http = at.socket ? createServer() : null
  const server = http
    ? new WebSocketServer({ server: http, path, maxPayload: 512 * 1024 * 1024 })
    : new WebSocketServer({ host: '127.0.0.1', port: 0, path, maxPayload: 512 * 1024 * 1024 })
  await new Promise<void>((resolve, reject) => {
    const target = http ?? server
    target.once('listening', resolve)
    target.once('error', reject)
    if (http) http.listen(at.socket)
  })
  const violations: ProxyViolation[] = []
  const sockets = new Set<WebSocket>()
  let connected = false
  server.on('connection', (client, request) => {
    if (connected) {
      client.close(1008, 'one client per run')
      return
    }
    connected = true
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(request.headers)) {
      if (typeof v === 'string' && !/^(host|connection|upgrade|sec-websocket-.*)$/i.test(k)) headers[k] = v
    }
    const up = new WebSocket(upstream, { headers, maxPayload: 512 * 1024 * 1024, perMessageDeflate: false })
    sockets.add(client)
    sockets.add(up)
    const pending: RawData[] = []
    const toUpstream = (data: RawData) => {
      if (up.readyState === WebSocket.OPEN) up.send(data, { binary: false })
      else pending.push(data)
    }
    up.on('open', () => {
      for (const data of pending.splice(0)) up.send(data, { binary: false })
    })
    up.on('message', (data, isBinary) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary })
    })
    client.on('message', (data) => {
      let message: { id?: unknown; method?: unknown; params?: unknown; guid?: unknown }
      try {
        message = JSON.parse(data.toString('utf8'))
      } catch {
        client.close(1008, 'not a protocol message')
        return
      }
      const why = refusal(message, rules)
      if (!why) {
        toUpstream(data)
        return
      }
      violations.push({ method: String(message.method), detail: why })
      client.send(JSON.stringify({ id: message.id, error: { error: { message: `sandbox: ${why}`, name: 'Error', stack: '' } } }))
    })
    const closeBoth = () => {
      if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close()
      if (up.readyState === WebSocket.OPEN || up.readyState === WebSocket.CONNECTING) up.close()
    }
    client.on('close', closeBoth)
    up.on('close', closeBoth)
    client.on('error', closeBoth)
    up.on('error', closeBoth)
  })
  const endpoint = http ? `ws://${at.endpointHost}${path}` : `ws://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return {
    endpoint,
    violations,
    close: async () => {
      for (const s of sockets) s.terminate()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      if (http) await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
