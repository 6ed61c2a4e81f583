/**
 * The one way out of a contained run's network (jail.ts), on a unix socket in the run's folder
 * that its bridges and its Node clients' tunnels reach, under the run's policy (`allow` opens
 * anything); and the way out of an uncontained browser check's Chromium under the private-target
 * policy `deny`: an HTTP proxy on 127.0.0.1 that the browser is launched with (Playwright's
 * launch `proxy`, which also sends loopback through it and which the browser's API requests,
 * `page.request` and `route.fetch`, use as well; a contained browser's proxy listens on both). It opens every connection as a probe does (targets.ts): an IP
 * literal is checked before connecting, a name by a lookup that checks every address it
 * resolves to, and the address connected to once more. A refused target gets a 403 and is kept
 * in `refusals`, which fails the run with `hasErrors` as any sandbox refusal does.
 *
 * `CONNECT host:port` carries HTTPS and WebSockets; an absolute-form request (`GET http://…`)
 * carries plain HTTP. Anything else (a request in origin form, another scheme) is a 400.
 */
import http from 'node:http'
import net, { type AddressInfo, type Socket } from 'node:net'
import { connectedRefusal, guardedLookup, literalRefusal, refusalIn, type TargetPolicy } from '../targets.js'

export interface EgressProxy {
  /** `http://127.0.0.1:PORT`, for the browser's launch options (`unix:PATH` on a unix socket alone). */
  url: string
  /** The port on 127.0.0.1, when it listens there (null: on its unix socket alone). */
  port: number | null
  /** What the policy refused, each once, in order (at most 20). */
  refusals: string[]
  close(): Promise<void>
}

const MAX_REFUSALS = 20
// hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

/** `host:port` of a CONNECT request (`[::1]:443` for IPv6), or null. */
function authority(text: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text)
  if (!m) return null
  const port = Number(m[3])
  return port >= 1 && port <= 65535 ? { host: m[1] ?? m[2], port } : null
}

/** What the two handlers share: a connection opened under the policy (or its refusal), and the record of refusals. */
interface Egress {
  open(host: string, port: number): Socket | string
  refused(why: string): void
}

/** Plain HTTP: an absolute-form request, forwarded on a connection opened under the policy. */
function forward(egress: Egress, req: http.IncomingMessage, res: http.ServerResponse): void {
  let target: URL
  try {
    target = new URL(req.url ?? '')
  } catch {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('a proxy request names an absolute http: URL\n')
    return
  }
  if (target.protocol !== 'http:') {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`${target.protocol} is not carried by this proxy\n`)
    return
  }
  const opened = egress.open(target.hostname.replace(/^\[(.*)\]$/, '$1'), Number(target.port) || 80)
  if (typeof opened === 'string') {
    egress.refused(opened)
    res.writeHead(403, { 'content-type': 'text/plain' }).end(`${opened}\n`)
    return
  }
  const headers: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v
  const upstream = http.request(
    {
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      createConnection: () => opened,
    },
    (answer) => {
      const out: Record<string, string | string[]> = {}
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out)
      answer.pipe(res)
    },
  )
  upstream.on('error', (error) => {
    const why = refusalIn(error)
    if (why) egress.refused(why.message)
    if (!res.headersSent) res.writeHead(why ? 403 : 502, { 'content-type': 'text/plain' }).end(`${why?.message ?? error.message}\n`)
    else res.destroy()
  })
  // the browser gave up (a page closed mid-download): the target's connection goes too
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy()
  })
  req.pipe(upstream)
}

/** The answer to a CONNECT the policy refuses: a 403 whose body names the refusal (the scripts' tunnels show it). */
function refusedAnswer(why: string): string {
  const body = `${why}\n`
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

/** `CONNECT host:port`: a tunnel to a connection opened under the policy (HTTPS, WebSockets). */
function tunnel(egress: Egress, req: http.IncomingMessage, client: Socket, head: Buffer): void {
  const target = authority(req.url ?? '')
  if (!target) {
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
    return
  }
  const opened = egress.open(target.host, target.port)
  if (typeof opened === 'string') {
    egress.refused(opened)
    client.end(refusedAnswer(opened))
    return
  }
  opened.once('connect', () => {
    if (opened.destroyed) return
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length > 0) opened.write(head)
    opened.pipe(client)
    client.pipe(opened)
  })
  opened.on('error', (error) => {
    const why = refusalIn(error)
    if (why) egress.refused(why.message)
    if (!client.destroyed) client.end(why ? refusedAnswer(why.message) : 'HTTP/1.1 502 Bad Gateway\r\n\r\n')
  })
  client.on('error', () => opened.destroy())
  client.on('close', () => opened.destroy())
}

/**
 * Starts the proxy on 127.0.0.1 (a free port), or on the unix socket `at.path` (a contained run's
 * way out: its bridges reach it there; its `url` is then `unix:PATH`), or on both (`at.tcp`: the
 * contained browser's proxy is then one address, 127.0.0.1:PORT, for Chromium in its sandbox
 * through a bridge on that port and for Playwright's API requests in this process).
 */
export async function startEgress(policy: TargetPolicy, at: { path?: string; tcp?: boolean } = {}): Promise<EgressProxy> {
  const refusals: string[] = []
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  }
  const egress: Egress = {
    refused: (why) => {
      if (!refusals.includes(why) && refusals.length < MAX_REFUSALS) refusals.push(why)
    },
    open: (host, port) => {
      const early = literalRefusal(policy, host, port)
      if (early) return early
      const socket = net.connect({ host, port, lookup: guardedLookup(policy, port) as never })
      socket.once('connect', () => connectedRefusal(policy, host, socket))
      track(socket)
      return socket
    },
  }
  const serve = () => {
    const server = http.createServer((req, res) => forward(egress, req, res))
    server.on('connection', track)
    server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => tunnel(egress, req, client, head))
    return server
  }
  const servers: http.Server[] = []
  const listen = (server: http.Server, ...where: [string] | [number, string]) =>
    new Promise<void>((resolve, reject) => {
      servers.push(server)
      server.once('error', reject)
      server.listen(...(where as [number, string]), () => resolve())
    })
  if (at.path) await listen(serve(), at.path)
  const onTcp = at.tcp || !at.path ? serve() : null
  if (onTcp) await listen(onTcp, 0, '127.0.0.1')
  const port = onTcp ? (onTcp.address() as AddressInfo).port : null
  return {
    url: port !== null ? `http://127.0.0.1:${port}` : `unix:${at.path}`,
    port,
    refusals,
    close: async () => {
      for (const s of sockets) s.destroy()
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
    },
  }
}
