/**
 * One reference check for every route: a body's unknown status-page services are reported
 * together with its schema problems, in the same words, by checks, pages and incidents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, dnsBody, expect400, icmpBody, startTestServer, type Call } from '../helpers.js'

let server: LocalServer
let api: Call

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
})
afterAll(() => server.close())

const unknown = (id: string) => `refers to a status page service that does not exist (got "${id}")`
const trigger = (serviceId: string) => ({ serviceId, severity: 'MAJOR', name: 'down', description: 'd' })

describe('unknown services are reported with the schema problems', () => {
  it('a check with a bad frequency and an unknown triggerIncident.serviceId reports both', async () => {
    for (const [path, body] of [
      ['/v1/checks/dns', dnsBody({ frequency: 3, triggerIncident: trigger('nope') })],
      ['/v1/checks/icmp', icmpBody({ frequency: 3, triggerIncident: trigger('nope') })],
    ] as const) {
      const answer = await api('POST', path, body)
      expect(expect400(answer, 'payload'), path).toEqual(['frequency', 'triggerIncident.serviceId'])
      expect(answer.json.attributes.issues[1]).toEqual({ path: 'triggerIncident.serviceId', message: unknown('nope') })
    }
    const check = (await api('POST', '/v1/checks/dns', dnsBody())).json
    const update = await api('PUT', `/v1/checks/dns/${check.id}`, dnsBody({ frequency: 3, triggerIncident: trigger('nope') }))
    expect(expect400(update, 'payload')).toEqual(['frequency', 'triggerIncident.serviceId'])
  })

  it('status pages and incidents say it in the same words', async () => {
    const page = await api('POST', '/v1/status-pages', { name: 'p', url: 'UPPER', cards: [{ name: 'c', services: [{ id: 'nope' }] }] })
    expect(expect400(page, 'payload')).toEqual(['url', 'cards.0.services.0.id'])
    expect(page.json.attributes.issues[1].message).toBe(unknown('nope'))
    const incident = await api('POST', '/v1/incidents', { name: '', severity: 'MINOR', services: [{ id: 'nope' }] })
    expect(expect400(incident, 'payload')).toEqual(['name', 'services.0.id'])
    expect(incident.json.attributes.issues[1].message).toBe(unknown('nope'))
  })
})
