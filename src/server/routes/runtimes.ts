import { networkInterfaces } from 'node:os'
import type { FastifyInstance } from 'fastify'
import { RUNTIMES } from '../../schema/index.js'
import { notFound } from '../errors.js'

export function runtimeRoutes(app: FastifyInstance): void {
  app.get('/v1/runtimes', async () => RUNTIMES)

  app.get<{ Params: { id: string } }>('/v1/runtimes/:id', async (request) => {
    const runtime = RUNTIMES.find((r) => r.name === request.params.id)
    if (!runtime) throw notFound('Runtime')
    return runtime
  })
}

/** This machine's global IPv6 addresses: not loopback, not link-local (fe80::/10), not unique-local (fc00::/7). */
export function globalIpv6Addresses(): string[] {
  const found = new Set<string>()
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family !== 'IPv6' || entry.internal) continue
      const address = entry.address.toLowerCase()
      if (address === '::1' || /^fe[89ab]/.test(address) || /^f[cd]/.test(address)) continue
      found.add(address)
    }
  }
  return [...found]
}

/** GET /v1/static-ipv6s.txt: text/plain, one address per line, newline-terminated. */
export function ipv6Routes(app: FastifyInstance, fixed: string[] | undefined): void {
  app.get('/v1/static-ipv6s.txt', async (_request, reply) => {
    const addresses = fixed ?? globalIpv6Addresses()
    return reply.type('text/plain; charset=utf-8').send(addresses.map((a) => `${a}\n`).join(''))
  })
}
