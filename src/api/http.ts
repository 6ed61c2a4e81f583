import { createReadStream } from 'node:fs'
import type { Agent as HttpAgent, IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'

/**
 * The API client's transport: keep-alive connections to one origin on Node's own `http` and
 * `https`. Loading them costs a few milliseconds where undici's pool cost 80–130 ms of every
 * command's start-up (its client loads `http2` and much more). What the client needs is small:
 * a request, its status, headers and text, and three timeouts.
 *
 * Errors carry a `code`: Node's for sockets (ECONNREFUSED, ENOTFOUND, ECONNRESET...), and
 * CONNECT_TIMEOUT, HEADERS_TIMEOUT and BODY_TIMEOUT for the timeouts.
 */

export interface TransportOptions {
  /** Connections kept open at most. */
  connections: number
  /** How long connecting, waiting for the headers, and waiting between two pieces of the body may each take. */
  timeoutMs: number
}

export interface TransportRequest {
  method: string
  /** Path and query string. */
  path: string
  headers: Record<string, string>
  /** text, or a file sent as it is read (its size as the content length) */
  body?: string | { file: string; length: number }
  /** This request's timeouts instead of the transport's (a long poll the server holds open). */
  timeoutMs?: number
}

export interface TransportResponse {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  text: string
  /** The body as received (a screenshot, a trace: `text` is its UTF-8 reading). */
  bytes: Buffer
}

export const CONNECT_TIMEOUT = 'CONNECT_TIMEOUT'
export const HEADERS_TIMEOUT = 'HEADERS_TIMEOUT'
export const BODY_TIMEOUT = 'BODY_TIMEOUT'

/** An answer that did not come in time (the request may have been carried out). */
export function isTimeoutError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return code === HEADERS_TIMEOUT || code === BODY_TIMEOUT
}

const require = createRequire(import.meta.url)

function transportError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code })
}

export class Transport {
  readonly #origin: URL
  readonly #agent: HttpAgent
  readonly #request: typeof import('node:http').request
  readonly #timeoutMs: number
  #closed = false
  #inFlight = 0
  #drained: Array<() => void> = []

  constructor(origin: string, options: TransportOptions) {
    this.#origin = new URL(origin)
    const secure = this.#origin.protocol === 'https:'
    const module = (secure ? require('node:https') : require('node:http')) as typeof import('node:http')
    // an idle connection is closed after 4 s, or before the server's own Keep-Alive timeout when it announces one
    this.#agent = new module.Agent({ keepAlive: true, maxSockets: options.connections, scheduling: 'lifo', timeout: 4_000 })
    this.#request = module.request
    this.#timeoutMs = options.timeoutMs
  }

  /** Sends one request; resolves to the whole answer whatever its status, rejects when none came. */
  async send(request: TransportRequest): Promise<TransportResponse> {
    this.#inFlight++
    try {
      return await this.#send(request)
    } finally {
      if (--this.#inFlight === 0) for (const done of this.#drained.splice(0)) done()
    }
  }

  #send(request: TransportRequest): Promise<TransportResponse> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(transportError('the client is closed', 'CLIENT_CLOSED'))
        return
      }
      const headers: Record<string, string> = { ...request.headers }
      const body = request.body
      if (body !== undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length)
      const req = this.#request({
        protocol: this.#origin.protocol,
        hostname: this.#origin.hostname.replace(/^\[|\]$/g, ''),
        port: this.#origin.port || undefined,
        method: request.method,
        path: request.path,
        headers,
        agent: this.#agent,
      })
      let timer: NodeJS.Timeout | undefined
      let settled = false
      const timeoutMs = request.timeoutMs ?? this.#timeoutMs
      const arm = (code: string, message: string) => {
        clearTimeout(timer)
        timer = setTimeout(() => req.destroy(transportError(message, code)), timeoutMs)
      }
      const fail = (error: Error) => {
        clearTimeout(timer)
        if (settled) return
        settled = true
        reject(error)
      }
      req.on('error', fail)
      req.on('socket', (socket) => {
        if (socket.connecting) {
          arm(CONNECT_TIMEOUT, `no connection within ${timeoutMs} ms`)
          socket.once('connect', () => arm(HEADERS_TIMEOUT, `no answer within ${timeoutMs} ms`))
        } else {
          arm(HEADERS_TIMEOUT, `no answer within ${timeoutMs} ms`)
        }
      })
      req.on('response', (response: IncomingMessage) => {
        arm(BODY_TIMEOUT, `the answer stalled for ${timeoutMs} ms`)
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          arm(BODY_TIMEOUT, `the answer stalled for ${timeoutMs} ms`)
        })
        response.on('error', fail)
        response.on('close', () => {
          if (!response.complete) fail(transportError('the connection closed before the answer was complete', 'ECONNRESET'))
        })
        response.on('end', () => {
          clearTimeout(timer)
          if (settled) return
          if (!response.complete) {
            fail(transportError('the connection closed before the answer was complete', 'ECONNRESET'))
            return
          }
          settled = true
          const bytes = Buffer.concat(chunks)
          resolve({ statusCode: response.statusCode ?? 0, headers: response.headers as TransportResponse['headers'], text: bytes.toString('utf8'), bytes })
        })
      })
      if (typeof body !== 'object') {
        req.end(body)
        return
      }
      // a file: the wait for the answer starts again with each piece sent
      const file = createReadStream(body.file)
      file.on('data', () => arm(HEADERS_TIMEOUT, `no answer within ${this.#timeoutMs} ms`))
      file.on('error', (error) => req.destroy(error))
      file.pipe(req)
    })
  }

  /** Refuses new requests, lets those in flight finish, then closes every connection. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#inFlight > 0) await new Promise<void>((done) => this.#drained.push(done))
    this.#agent.destroy()
  }
}
