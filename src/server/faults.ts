import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { UserError } from '../errors.js'
import type { Clock } from '../runner/clock.js'

/**
 * Reproducible fault injection, for our own tests and for users testing their pipelines:
 * `--faults "500:0.1,429:0.05,reset:0.05,hang:0.01,latency:0-200ms" --seed 7`.
 *
 * - `500:p`   answers 500 before the request is handled (nothing changed).
 * - `429:p`   answers 429 with Retry-After, before the request is handled.
 * - `reset:p` handles the request, then drops the connection instead of answering: the change
 *             is made but the client never learns its outcome (the hard case for a client).
 * - `hang:p`  never answers (until the server closes): the client's timeout must fire.
 * - `latency:A-Bms` delays every request by a uniform random time in [A, B] ms.
 *
 * Draws come from one seeded generator in arrival order, so a sequential client sees the same
 * faults on every run. Only `/v1` routes are affected.
 */
export interface FaultSpec {
  error500: number
  error429: number
  reset: number
  hang: number
  latency?: { minMs: number; maxMs: number }
}

export class FaultSpecError extends UserError {}

const NAMES: Record<string, keyof Omit<FaultSpec, 'latency'>> = { '500': 'error500', '429': 'error429', reset: 'reset', hang: 'hang' }

export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = { error500: 0, error429: 0, reset: 0, hang: 0 }
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value] = part.split(':', 2).map((p) => p.trim())
    if (name === 'latency') {
      const match = /^(\d+)(?:-(\d+))?ms$/.exec(value ?? '')
      if (!match) throw new FaultSpecError(`--faults: latency must look like latency:0-200ms (got "${part}")`)
      const minMs = Number(match[1])
      const maxMs = match[2] === undefined ? minMs : Number(match[2])
      if (maxMs < minMs) throw new FaultSpecError(`--faults: latency range ${minMs}-${maxMs}ms is reversed`)
      spec.latency = { minMs, maxMs }
      continue
    }
    const key = name === undefined ? undefined : NAMES[name]
    const p = Number(value)
    if (!key) throw new FaultSpecError(`--faults: unknown fault "${name}" (allowed: 500, 429, reset, hang, latency)`)
    if (value === undefined || value === '' || Number.isNaN(p) || p < 0 || p > 1) {
      throw new FaultSpecError(`--faults: ${name} needs a probability from 0 to 1 (got "${value ?? ''}")`)
    }
    spec[key] = p
  }
  const total = spec.error500 + spec.error429 + spec.reset + spec.hang
  if (total > 1) throw new FaultSpecError(`--faults: the probabilities add up to ${total}, more than 1`)
  return spec
}

/** mulberry32: a small, fast, seedable generator; plenty for choosing faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type FaultCounts = Record<'500' | '429' | 'reset' | 'hang' | 'latency', number>

const RESET = Symbol('monitors.fault.reset')

/** Adds the fault hooks to an app; returns live counts of the faults injected so far. */
export function installFaults(app: FastifyInstance, spec: FaultSpec, seed: number, clock: Clock): { counts: FaultCounts } {
  const random = seededRandom(seed)
  const counts: FaultCounts = { '500': 0, '429': 0, reset: 0, hang: 0, latency: 0 }
  const hanging = new Set<() => void>()
  // before the server stops accepting and waits for requests in flight, or it would wait for ever
  app.addHook('preClose', async () => {
    for (const release of hanging) release()
  })

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.url.startsWith('/v1/')) return
    const draw = random()
    const latency = spec.latency ? spec.latency.minMs + random() * (spec.latency.maxMs - spec.latency.minMs) : 0
    if (latency > 0) {
      counts.latency++
      await new Promise((r) => setTimeout(r, latency))
    }
    let edge = spec.error500
    if (draw < edge) {
      counts['500']++
      return reply
        .code(500)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ statusCode: 500, error: 'Internal Server Error', message: 'An internal server error occurred' }))
    }
    edge += spec.error429
    if (draw < edge) {
      counts['429']++
      return reply
        .code(429)
        .header('retry-after', '1')
        .type('application/json; charset=utf-8')
        .send(
          JSON.stringify({
            statusCode: 429,
            error: 'Too Many Requests',
            message: 'Rate limit exceeded, retry in 1 seconds',
            attributes: { limit: 0, remaining: 0, reset: Math.ceil(clock.now() / 1000) + 1 },
          }),
        )
    }
    edge += spec.reset
    if (draw < edge) {
      counts.reset++
      ;(request as unknown as Record<symbol, boolean>)[RESET] = true
      return
    }
    edge += spec.hang
    if (draw < edge) {
      counts.hang++
      await new Promise<void>((resolve) => {
        const release = () => {
          hanging.delete(release)
          resolve()
        }
        hanging.add(release)
        // held until the client gives up (its socket closes) or the server closes
        request.raw.socket?.once('close', release)
      })
      if (request.raw.socket?.destroyed) return reply.hijack()
      return reply
        .code(503)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message: 'Server is shutting down' }))
    }
  })

  app.addHook('onSend', async (request, _reply, payload) => {
    if ((request as unknown as Record<symbol, boolean>)[RESET]) {
      // the work is done and committed; the answer is lost on the way
      request.raw.socket?.destroy()
    }
    return payload
  })
  return { counts }
}
