import { createServer, type Server } from 'node:http'
import { createHash, timingSafeEqual } from 'node:crypto'
import { UserError } from '../errors.js'
import { CONTENT_TYPE } from '../runner/metrics.js'

/**
 * The agent's health probes (spec, "Agent health probes"), plain text:
 * - GET /-/readiness: 200 `OK` while the agent takes runs, 503 `Service Unavailable` from the
 *   moment it starts shutting down (it still finishes its runs in flight);
 * - GET /-/liveness and GET /health: 200 `OK` as long as the process serves them.
 * - GET /metrics: the agent's metrics in Prometheus' text format (docs/metrics.md); with a
 *   metrics token set, only for `Authorization: Bearer <token>` (else 401).
 * HEAD answers the same without a body; another method on a probe is 405, any other path 404.
 */
export interface HealthServer {
  port: number
  close(): Promise<void>
}

const PROBES = new Set(['/-/readiness', '/-/liveness', '/health', '/metrics'])

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
  return match !== null && timingSafeEqual(digest(match[1]), digest(token))
}

export interface HealthServerOptions {
  port: number
  host?: string
  ready: () => boolean
  /** the text of GET /metrics (404 without it) */
  metrics?: () => string
  /** the bearer token GET /metrics requires, when set */
  metricsToken?: string
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    const send = (status: number, text: string, headers: Record<string, string> = {}) => {
      const body = `${text}\n`
      response.writeHead(status, {
        'content-type': 'text/plain; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
        ...headers,
      })
      response.end(request.method === 'HEAD' ? undefined : body)
    }
    if (!PROBES.has(path) || (path === '/metrics' && !options.metrics)) return send(404, 'Not Found')
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'Method Not Allowed', { allow: 'GET, HEAD' })
    if (path === '/metrics' && options.metrics) {
      if (options.metricsToken && !bearerMatches(request.headers.authorization, options.metricsToken)) {
        return send(401, 'Unauthorized', { 'www-authenticate': 'Bearer' })
      }
      const body = options.metrics()
      response.writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' })
      return response.end(request.method === 'HEAD' ? undefined : body)
    }
    if (path === '/-/readiness' && !options.ready()) return send(503, 'Service Unavailable')
    return send(200, 'OK')
  })
  // probes are short; a prober that keeps a connection open must not hold the exit back
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new UserError(`The health port ${options.port} is in use: pass --health-port (0 picks a free one) or set AGENT_HEALTH_PORT.`))
      } else if (error.code === 'EACCES') {
        reject(new UserError(`The health port ${options.port} may not be opened by this user: pass --health-port with a port above 1023 (0 picks a free one).`))
      } else {
        reject(error)
      }
    })
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
