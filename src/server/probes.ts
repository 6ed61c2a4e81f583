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
 *   probes of one second, so a busy probe costs the database little. A probe never waits more
 *   than PROBE_WAIT_MS for a ping once one has answered: a ping still waiting for a connection
 *   behind busy lease extensions answers the last ping's state, so a balancer's own timeout
 *   (often 2–5 s) does not take a busy server out; the ping goes on, and one failing or without
 *   an answer after PING_TIMEOUT_MS makes the next probes 503.
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
/** A probe waits this long for a ping in flight before it answers the last ping's state. */
const PROBE_WAIT_MS = 1000

export function probeRoutes(app: FastifyInstance, store: Store, closing: AbortSignal): void {
  let last: { at: number; ready: boolean } | undefined
  let pinging: Promise<boolean> | undefined

  const ping = (): Promise<boolean> => {
    pinging ??= (async () => {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)))
      try {
        const ready = await Promise.race([
          store.ping().then(
            () => true,
            (error: unknown) => error instanceof StorePoolSaturated,
          ),
          late,
        ])
        last = { at: performance.now(), ready }
        return ready
      } finally {
        clearTimeout(timer)
        pinging = undefined
      }
    })()
    return pinging
  }

  /** The ping's answer, or the last ping's state when it has one and this ping is slow. */
  const pingOrLast = async (): Promise<boolean> => {
    const previous = last
    if (!previous) return ping()
    let timer: NodeJS.Timeout | undefined
    const slow = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(previous.ready), PROBE_WAIT_MS)))
    try {
      return await Promise.race([ping(), slow])
    } finally {
      clearTimeout(timer)
    }
  }

  const probe = { config: { probe: true } }
  const text = 'text/plain; charset=utf-8'

  app.get('/-/liveness', probe, async (_request, reply) => reply.type(text).header('cache-control', 'no-store').send('OK'))

  app.get('/-/readiness', probe, async (_request, reply) => {
    reply.type(text).header('cache-control', 'no-store')
    const unavailable = (why: string) => reply.code(503).header('retry-after', String(UNAVAILABLE_RETRY_SECONDS)).send(`Service Unavailable: ${why}`)
    if (closing.aborted) return unavailable('shutting down')
    const ready = last && performance.now() - last.at < PING_CACHE_MS ? last.ready : await pingOrLast()
    if (closing.aborted) return unavailable('shutting down')
    return ready ? reply.send('OK') : unavailable('the database is unavailable')
  })
}
