import type { FastifyInstance, FastifyRequest } from 'fastify'
import { StorePoolSaturated, type Store } from './store/index.js'
import { UNAVAILABLE_RETRY_SECONDS } from './errors.js'

/*
 * The server's health probes, for a balancer or an orchestrator, shaped like the agent's
 * (API.md, "Agent health probes"): plain text, no key, no rate limit.
 * - GET /-/liveness: 200 `OK` while the process serves requests. A database that is away does
 *   not make it fail: restarting the process would not bring the database back.
 * - GET /-/readiness: 200 `OK` when the database takes work (Store.ping); 503 `Service
 *   Unavailable: …` with Retry-After while it does not (an error of the database, or no answer
 *   within PING_TIMEOUT_MS), and once the server is shutting down. A busy server is ready: a
 *   ping that found every connection busy (StorePoolSaturated) passes, so a balancer does not
 *   take out servers that are slow, all of them at once when all are. A ping is shared by the
 *   probes of one second, so a busy probe costs the database little.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    probe?: boolean
  }
}

export const isProbe = (request: FastifyRequest): boolean => request.routeOptions.config?.probe === true

/** A ping slower than this counts as the database being away (the PostgreSQL store pings on a pool of its own). */
const PING_TIMEOUT_MS = 5000
/** A ping's answer serves the probes of this many ms. */
const PING_CACHE_MS = 1000

export function probeRoutes(app: FastifyInstance, store: Store, closing: AbortSignal): void {
  let last: { at: number; ready: boolean } | undefined
  let pinging: Promise<boolean> | undefined

  const ping = (): Promise<boolean> => {
    pinging ??= (async () => {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)))
      try {
        const ready = await Promise.race([store.ping().then(() => true, (error: unknown) => error instanceof StorePoolSaturated), late])
        last = { at: performance.now(), ready }
        return ready
      } finally {
        clearTimeout(timer)
        pinging = undefined
      }
    })()
    return pinging
  }

  const probe = { config: { probe: true } }
  const text = 'text/plain; charset=utf-8'

  app.get('/-/liveness', probe, async (_request, reply) => reply.type(text).header('cache-control', 'no-store').send('OK'))

  app.get('/-/readiness', probe, async (_request, reply) => {
    reply.type(text).header('cache-control', 'no-store')
    const unavailable = (why: string) => reply.code(503).header('retry-after', String(UNAVAILABLE_RETRY_SECONDS)).send(`Service Unavailable: ${why}`)
    if (closing.aborted) return unavailable('shutting down')
    const ready = last && performance.now() - last.at < PING_CACHE_MS ? last.ready : await ping()
    if (closing.aborted) return unavailable('shutting down')
    return ready ? reply.send('OK') : unavailable('the database is unavailable')
  })
}
