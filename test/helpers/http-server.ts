import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { generate } from 'selfsigned'

/** How a route answers. */
export interface Route {
  status?: number
  headers?: Record<string, string | string[]>
  /** A string or an object (sent as JSON with content-type application/json). */
  body?: string | object
  /** Wait before the status line and headers are written. */
  delayBeforeHeadersMs?: number
  /** Wait between the headers (with the body's first half) and the rest of the body. */
  delayDuringBodyMs?: number
  /** Answers a redirect to this location (status 302 unless `status` says otherwise). */
  redirectTo?: string
  /** Never answers (the socket stays open until the server closes). */
  hang?: boolean
}

export interface RecordedRequest {
  method: string
  /** Path with the query string. */
  path: string
  headers: Record<string, string | string[] | undefined>
  body: string
}

export interface HttpServerHandle {
  /** `http://127.0.0.1:<port>` or `https://127.0.0.1:<port>`. */
  origin: string
  port: number
  requests: RecordedRequest[]
  /** Sets the answer of a path (matched without the query string). */
  route(path: string, route: Route): void
  close(): Promise<void>
}

export interface TlsServerHandle extends HttpServerHandle {
  /** The certificate's notAfter. */
  validTo: Date
  /** PEM of the certificate. */
  cert: string
  /** Serves a new certificate from now on (a renewal): valid until `validDays` days from now, for the same names. */
  renew(validDays: number): Promise<void>
}

/** A self-signed certificate for `names` (default localhost and 127.0.0.1) valid until `validDays` days (+ `extraHours`) from now; a past end makes an expired one. */
async function certificate(validDays: number, extraHours = 0, names?: string[]) {
  const now = Date.now()
  const validTo = new Date(now + validDays * 86_400_000 + extraHours * 3_600_000)
  const altNames = names
    ? names.map((n) => (/^[\d.]+$/.test(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n }))
    : [
        { type: 2 as const, value: 'localhost' },
        { type: 7 as const, ip: '127.0.0.1' },
      ]
  const pems = await generate([{ name: 'commonName', value: names?.[0] ?? 'localhost' }], {
    keySize: 2048,
    notBeforeDate: new Date(Math.min(now, validTo.getTime()) - 86_400_000),
    notAfterDate: validTo,
    extensions: [{ name: 'subjectAltName', altNames }],
  })
  return { validTo, key: pems.private, cert: pems.cert }
}

function handler(routes: Map<string, Route>, requests: RecordedRequest[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      const route = routes.get(path.split('?')[0]) ?? { status: 404, body: 'not found' }
      if (route.hang) return
      const respond = () => {
        if (res.destroyed) return
        const headers: Record<string, string | string[]> = { ...(route.headers ?? {}) }
        let body = typeof route.body === 'object' ? JSON.stringify(route.body) : (route.body ?? '')
        if (typeof route.body === 'object' && !headers['content-type']) headers['content-type'] = 'application/json'
        if (route.redirectTo) headers.location = route.redirectTo
        const status = route.status ?? (route.redirectTo ? 302 : 200)
        if (req.method === 'HEAD') body = ''
        if (route.delayDuringBodyMs) {
          // headers and the first half now, the rest after the delay
          res.writeHead(status, headers)
          const half = Math.floor(body.length / 2)
          res.flushHeaders()
          if (half > 0) res.write(body.slice(0, half))
          setTimeout(() => res.end(body.slice(half)), route.delayDuringBodyMs)
          return
        }
        res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) })
        res.end(body)
      }
      if (route.delayBeforeHeadersMs) setTimeout(respond, route.delayBeforeHeadersMs)
      else respond()
    })
  }
}

async function listen(server: Server, scheme: 'http' | 'https', routes: Map<string, Route>, requests: RecordedRequest[]): Promise<HttpServerHandle> {
  const sockets = new Set<import('node:net').Socket>()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `${scheme}://127.0.0.1:${port}`,
    port,
    requests,
    route: (path, route) => {
      routes.set(path, route)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A plain HTTP server on 127.0.0.1 (a free port) that records every request. */
export async function startHttpServer(): Promise<HttpServerHandle> {
  const routes = new Map<string, Route>()
  const requests: RecordedRequest[] = []
  return listen(createHttpServer(handler(routes, requests)), 'http', routes, requests)
}

/**
 * An HTTPS server on 127.0.0.1 with a self-signed certificate (for 127.0.0.1 and localhost)
 * made in-process, valid from yesterday until `validDays` days (and `extraHours` hours) from now.
 */
export async function startTlsServer(options: { validDays: number; extraHours?: number; names?: string[] }): Promise<TlsServerHandle> {
  const first = await certificate(options.validDays, options.extraHours, options.names)
  const routes = new Map<string, Route>()
  const requests: RecordedRequest[] = []
  const server = createHttpsServer({ key: first.key, cert: first.cert }, handler(routes, requests))
  const handle = await listen(server, 'https', routes, requests)
  const renew = async (validDays: number) => {
    const next = await certificate(validDays, options.extraHours, options.names)
    server.setSecureContext({ key: next.key, cert: next.cert })
  }
  return { ...handle, validTo: first.validTo, cert: first.cert, renew }
}
