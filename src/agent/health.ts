import { createServer, type Server } from 'node:http'
import { UserError } from '../errors.js'

/**
 * The agent's health probes (spec, "Agent health probes"), plain text:
 * - GET /-/readiness: 200 `OK` while the agent takes runs, 503 `Service Unavailable` from the
 *   moment it starts shutting down (it still finishes its runs in flight);
 * - GET /-/liveness and GET /health: 200 `OK` as long as the process serves them.
 * HEAD answers the same without a body; another method on a probe is 405, any other path 404.
 */
export interface HealthServer {
  port: number
  close(): Promise<void>
}

const PROBES = new Set(['/-/readiness', '/-/liveness', '/health'])

export async function startHealthServer(options: { port: number; host?: string; ready: () => boolean }): Promise<HealthServer> {
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
    if (!PROBES.has(path)) return send(404, 'Not Found')
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'Method Not Allowed', { allow: 'GET, HEAD' })
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

