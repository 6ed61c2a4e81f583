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
    route: (path, route) => { routes.set(path, route) },
    close: () => new Promise<void>((resolve) => {
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
export async function startTlsServer(options: { validDays: number; extraHours?: number }): Promise<TlsServerHandle> {
  const now = Date.now()
  const validTo = new Date(now + options.validDays * 86_400_000 + (options.extraHours ?? 0) * 3_600_000)
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    notBeforeDate: new Date(now - 86_400_000),
    notAfterDate: validTo,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  })
  const routes = new Map<string, Route>()
  const requests: RecordedRequest[] = []
  const server = createHttpsServer({ key: pems.private, cert: pems.cert }, handler(routes, requests))
  const handle = await listen(server, 'https', routes, requests)
  return { ...handle, validTo, cert: pems.cert }
}
