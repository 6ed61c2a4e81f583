import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FREQUENCIES, LOCATIONS, RUNTIME_IDS } from '../../../src/schema/index.js'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, dnsBody, expect400, icmpBody, startTestServer, type Call } from '../helpers.js'

let server: LocalServer
let api: Call

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
})
afterAll(() => server.close())

async function checkCount(): Promise<number> {
  const list = await api('GET', '/v1/checks?limit=1')
  return Number(list.headers.get('content-range')?.split('/')[1])
}

describe('DNS checks', () => {
  it('creates a check with every default of the spec and reads it back', async () => {
    const created = await api('POST', '/v1/checks/dns', dnsBody())
    expect(created.status).toBe(201)
    expect(created.headers.get('content-type')).toMatch(/^application\/json/)
    const check = created.json
    expect(check.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(check).toMatchObject({
      name: 'dns example',
      checkType: 'DNS',
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 10,
      tags: [],
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      request: { query: 'example.com', recordType: 'A', protocol: 'UDP', assertions: [] },
      updated_at: null,
    })
    expect(Date.parse(check.created_at)).not.toBeNaN()
    // optional fields not sent are omitted, not null
    expect('locations' in check).toBe(false)
    const read = await api('GET', `/v1/checks/${check.id}`)
    expect(read.status).toBe(200)
    expect(read.json).toEqual(check)
  })

  it('ignores unknown and read-only fields', async () => {
    const created = await api('POST', '/v1/checks/dns', dnsBody({ id: 'mine', created_at: 'x', updated_at: 'y', checkType: 'DNS', color: 'red' }))
    expect(created.status).toBe(201)
    expect(created.json.id).not.toBe('mine')
    expect(created.json.updated_at).toBeNull()
    expect('color' in created.json).toBe(false)
  })

  it('PUT replaces the check: fields left out take their defaults again', async () => {
    const created = await api('POST', '/v1/checks/dns', dnsBody({ muted: true, tags: ['a'], locations: ['eu-west-1'], frequency: 60, frequencyOffset: 600 }))
    expect(created.status).toBe(201)
    const updated = await api('PUT', `/v1/checks/dns/${created.json.id}`, dnsBody({ name: 'renamed' }))
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ id: created.json.id, name: 'renamed', muted: false, tags: [], frequency: 10, created_at: created.json.created_at })
    expect('locations' in updated.json).toBe(false)
    expect('frequencyOffset' in updated.json).toBe(false)
    expect(Date.parse(updated.json.updated_at)).not.toBeNaN()
    expect((await api('GET', `/v1/checks/${created.json.id}`)).json).toEqual(updated.json)
  })

  it('PUT of an unknown id, or of a check of another type, is a 404', async () => {
    const unknown = await api('PUT', '/v1/checks/dns/00000000-0000-4000-8000-000000000000', dnsBody())
    expect(unknown.status).toBe(404)
    expect(unknown.json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' })
    const icmp = await api('POST', '/v1/checks/icmp', icmpBody())
    expect((await api('PUT', `/v1/checks/dns/${icmp.json.id}`, dnsBody())).status).toBe(404)
    const dns = await api('POST', '/v1/checks/dns', dnsBody())
    expect((await api('PUT', `/v1/checks/icmp/${dns.json.id}`, icmpBody())).status).toBe(404)
    expect((await api('GET', `/v1/checks/${dns.json.id}`)).json.checkType).toBe('DNS')
  })

  it('a PUT that fails validation changes nothing', async () => {
    const created = await api('POST', '/v1/checks/dns', dnsBody())
    const bad = await api('PUT', `/v1/checks/dns/${created.json.id}`, dnsBody({ frequency: 7 }))
    expect(expect400(bad, 'payload')).toEqual(['frequency'])
    expect((await api('GET', `/v1/checks/${created.json.id}`)).json).toEqual(created.json)
  })

  it('DELETE answers 204, then the check is gone', async () => {
    const created = await api('POST', '/v1/checks/dns', dnsBody())
    const deleted = await api('DELETE', `/v1/checks/${created.json.id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe('')
    expect((await api('GET', `/v1/checks/${created.json.id}`)).status).toBe(404)
    expect((await api('DELETE', `/v1/checks/${created.json.id}`)).status).toBe(404)
  })

  it('accepts every location and runtime, and rejects others', async () => {
    const ok = await api('POST', '/v1/checks/dns', dnsBody({ locations: [...LOCATIONS], runtimeId: RUNTIME_IDS[5] }))
    expect(ok.status).toBe(201)
    expect(ok.json.locations).toEqual([...LOCATIONS])
    for (const runtimeId of RUNTIME_IDS) expect((await api('POST', '/v1/checks/dns', dnsBody({ runtimeId }))).status).toBe(201)
    const bad = await api('POST', '/v1/checks/dns', dnsBody({ locations: ['eu-west-1', 'mars-1'], runtimeId: '2021.06' }))
    expect(expect400(bad, 'payload').sort()).toEqual(['locations.1', 'runtimeId'])
  })

  it('reports every offending field at once and stores nothing', async () => {
    const before = await checkCount()
    const bad = await api('POST', '/v1/checks/dns', {
      name: '',
      activated: 'yes',
      groupOrder: -1,
      frequency: 3,
      degradedResponseTime: 5001,
      maxResponseTime: -1,
      request: { query: 'x'.repeat(101), recordType: 'PTR', protocol: 'QUIC', assertions: [{ source: 'BODY', comparison: 'LIKE', target: 1 }] },
      alertSettings: { escalationType: 'SOMETIMES' },
      retryStrategy: { type: 'OFTEN', onlyOn: ['TIMEOUT'] },
      triggerIncident: { serviceId: 's', severity: 'HUGE', name: 'n', description: 'd' },
      alertChannels: { webhook: [{ url: 'u', name: 'n', method: 'TRACE' }] },
    })
    const keys = expect400(bad, 'payload')
    expect(keys.sort()).toEqual([
      'activated',
      'alertChannels.webhook.0.method',
      'alertChannels.webhook.0.url',
      'alertSettings.escalationType',
      'degradedResponseTime',
      'frequency',
      'groupOrder',
      'maxResponseTime',
      'name',
      'request.assertions.0.comparison',
      'request.assertions.0.source',
      'request.assertions.0.target',
      'request.protocol',
      'request.query',
      'request.recordType',
      'retryStrategy.onlyOn.0',
      'retryStrategy.type',
      'triggerIncident.serviceId',
      'triggerIncident.severity',
    ])
    expect(bad.json.message).toMatch(/^[\w.]+: /)
    expect(bad.json.attributes.issues.length).toBeGreaterThanOrEqual(keys.length)
    expect(await checkCount()).toBe(before)
  })

  it('requires name and request', async () => {
    expect(expect400(await api('POST', '/v1/checks/dns', {}), 'payload').sort()).toEqual(['name', 'request'])
    expect(expect400(await api('POST', '/v1/checks/dns', { name: 'n', request: {} }), 'payload')).toEqual(['request.query'])
  })

  it('accepts response times at 0 and 5000 ms, and null', async () => {
    const edge = await api('POST', '/v1/checks/dns', dnsBody({ degradedResponseTime: 0, maxResponseTime: 5000 }))
    expect(edge.status).toBe(201)
    const nulls = await api('POST', '/v1/checks/dns', dnsBody({ degradedResponseTime: null, maxResponseTime: null }))
    expect(nulls.json).toMatchObject({ degradedResponseTime: null, maxResponseTime: null })
  })

  it('validates autoAssignAlerts', async () => {
    expect((await api('POST', '/v1/checks/dns?autoAssignAlerts=false', dnsBody())).status).toBe(201)
    expect(expect400(await api('POST', '/v1/checks/dns?autoAssignAlerts=maybe', dnsBody()), 'query')).toEqual(['autoAssignAlerts'])
  })

  it('triggerIncident must name an existing status page service of the account', async () => {
    const trigger = (serviceId: string) => ({ serviceId, severity: 'MAJOR', name: 'Shop down', description: 'The shop does not resolve' })
    const before = await checkCount()
    const missing = await api('POST', '/v1/checks/dns', dnsBody({ triggerIncident: trigger('no-such-service') }))
    expect(expect400(missing, 'payload')).toEqual(['triggerIncident.serviceId'])
    expect(missing.json.message).toBe('triggerIncident.serviceId: refers to a status page service that does not exist (got "no-such-service")')
    expect(await checkCount()).toBe(before)

    const service = await api('POST', '/v1/status-pages/services', { name: 'Shop' })
    const created = await api('POST', '/v1/checks/dns', dnsBody({ triggerIncident: trigger(service.json.id) }))
    expect(created.status).toBe(201)
    expect(created.json.triggerIncident).toMatchObject({ serviceId: service.json.id, severity: 'MAJOR', notifySubscribers: false })
    const updated = await api('PUT', `/v1/checks/dns/${created.json.id}`, dnsBody({ triggerIncident: trigger('gone') }))
    expect(expect400(updated, 'payload')).toEqual(['triggerIncident.serviceId'])
  })
})

describe('ICMP checks', () => {
  it('creates with the ICMP defaults of the spec', async () => {
    const created = await api('POST', '/v1/checks/icmp', icmpBody())
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({
      checkType: 'ICMP',
      degradedResponseTime: 10000,
      maxResponseTime: 20000,
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
      request: { hostname: 'example.com', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
      heartbeat: {},
      script: '',
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 10,
    })
  })

  it('requires name, request, heartbeat and script', async () => {
    const keys = expect400(await api('POST', '/v1/checks/icmp', {}), 'payload')
    expect(keys.sort()).toEqual(['heartbeat', 'name', 'request', 'script'])
  })

  it('enforces the ICMP limits at their boundaries', async () => {
    const ok = await api(
      'POST',
      '/v1/checks/icmp',
      icmpBody({
        degradedResponseTime: 0,
        maxResponseTime: 300000,
        degradedPacketLossThreshold: 0,
        maxPacketLossThreshold: 100,
        request: {
          hostname: 'h'.repeat(2048),
          pingCount: 50,
          ipFamily: 'IPv6',
          assertions: [{ source: 'LATENCY', property: 'stddev', comparison: 'LESS_THAN', target: '100' }],
        },
        environmentVariables: Array.from({ length: 50 }, (_, i) => ({ key: `K${i}`, value: 'v' })),
        groupOrder: 0,
      }),
    )
    expect(ok.status).toBe(201)
    expect((await api('POST', '/v1/checks/icmp', icmpBody({ request: { hostname: 'h', pingCount: 1 } }))).status).toBe(201)
    const bad = await api(
      'POST',
      '/v1/checks/icmp',
      icmpBody({
        degradedResponseTime: -1,
        maxResponseTime: 300001,
        degradedPacketLossThreshold: 10.5,
        maxPacketLossThreshold: 101,
        request: {
          hostname: '',
          pingCount: 51,
          ipFamily: 'IPv5',
          assertions: [{ source: 'LATENCY', property: 'median', comparison: 'LESS_THAN', target: '1' }],
        },
        environmentVariables: Array.from({ length: 51 }, (_, i) => ({ key: `K${i}`, value: 'v' })),
      }),
    )
    expect(expect400(bad, 'payload').sort()).toEqual([
      'degradedPacketLossThreshold',
      'degradedResponseTime',
      'environmentVariables',
      'maxPacketLossThreshold',
      'maxResponseTime',
      'request.assertions.0.property',
      'request.hostname',
      'request.ipFamily',
      'request.pingCount',
    ])
    const zeroPings = await api('POST', '/v1/checks/icmp', icmpBody({ request: { hostname: 'h', pingCount: 0 } }))
    expect(expect400(zeroPings, 'payload')).toEqual(['request.pingCount'])
  })

  it('PUT replaces an ICMP check', async () => {
    const created = await api('POST', '/v1/checks/icmp', icmpBody({ maxPacketLossThreshold: 50 }))
    const updated = await api('PUT', `/v1/checks/icmp/${created.json.id}`, icmpBody({ name: 'again' }))
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ id: created.json.id, name: 'again', maxPacketLossThreshold: 20, checkType: 'ICMP' })
  })
})

describe('frequency and frequencyOffset', () => {
  // rule 3: 0 < frequency <= 60 → 1..floor(frequency * 10); rule 4: frequency > 60 → 1..ceil(frequency / 60)
  const cases = FREQUENCIES.filter((f) => f > 0).map((f) => ({ f, max: f <= 60 ? Math.floor(f * 10) : Math.ceil(f / 60) }))

  it.each(cases)('frequency $f allows offsets 1..$max only', async ({ f, max }) => {
    for (const [offset, expected] of [
      [1, 201],
      [max, 201],
      [0, 400],
      [max + 1, 400],
    ] as const) {
      const answer = await api('POST', '/v1/checks/dns', dnsBody({ frequency: f, frequencyOffset: offset }))
      expect(answer.status, `frequency ${f}, offset ${offset}: ${answer.text}`).toBe(expected)
      if (expected === 400) expect(answer.json.attributes.keys).toEqual(['frequencyOffset'])
      else expect(answer.json.frequencyOffset).toBe(offset)
    }
  })

  it('uses the default frequency 10 for the offset range when frequency is omitted', async () => {
    expect((await api('POST', '/v1/checks/icmp', icmpBody({ frequencyOffset: 100 }))).status).toBe(201)
    expect(expect400(await api('POST', '/v1/checks/icmp', icmpBody({ frequencyOffset: 101 })), 'payload')).toEqual(['frequencyOffset'])
  })

  it('rule 2: frequency 0 (offsets 10, 20, 30) is only for API and TCP checks, so DNS and ICMP refuse it', async () => {
    for (const offset of [10, 20, 30]) {
      const dns = await api('POST', '/v1/checks/dns', dnsBody({ frequency: 0, frequencyOffset: offset }))
      expect(expect400(dns, 'payload')).toEqual(['frequency'])
      const icmp = await api('POST', '/v1/checks/icmp', icmpBody({ frequency: 0, frequencyOffset: offset }))
      expect(expect400(icmp, 'payload')).toEqual(['frequency'])
    }
  })

  it('rejects frequencies outside the 13 values and non-integer offsets', async () => {
    for (const frequency of [3, 61, 1441, -1, 10.5, '10']) {
      expect(expect400(await api('POST', '/v1/checks/dns', dnsBody({ frequency })), 'payload')).toContain('frequency')
    }
    expect(expect400(await api('POST', '/v1/checks/dns', dnsBody({ frequencyOffset: 1.5 })), 'payload')).toEqual(['frequencyOffset'])
  })
})

describe('GET /v1/checks', () => {
  let ids: string[]
  let fresh: Call

  beforeAll(async () => {
    // a separate account keeps this list independent of the tests above
    const other = await startTestServer({ apiKeys: [{ key: 'list-key-0123456789abcdef0123456789', accountId: 'lister' }] })
    fresh = caller(other, 'list-key-0123456789abcdef0123456789')
    ids = []
    for (let i = 0; i < 25; i++) {
      const body = i % 5 === 0 ? icmpBody({ name: `c${i}`, tags: ['ping', `n${i}`] }) : dnsBody({ name: `c${i}`, tags: i % 2 ? ['odd'] : ['even'] })
      const created = await fresh('POST', i % 5 === 0 ? '/v1/checks/icmp' : '/v1/checks/dns', body)
      ids.push(created.json.id)
    }
    return () => other.close()
  })

  it('pages in creation order with a content-range header (limit 10, page 1 by default)', async () => {
    const first = await fresh('GET', '/v1/checks')
    expect(first.status).toBe(200)
    expect(first.json.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 10))
    expect(first.headers.get('content-range')).toBe('0-9/25')
    const third = await fresh('GET', '/v1/checks?limit=10&page=3')
    expect(third.json.map((c: { id: string }) => c.id)).toEqual(ids.slice(20))
    expect(third.headers.get('content-range')).toBe('20-24/25')
    const beyond = await fresh('GET', '/v1/checks?limit=10&page=4')
    expect(beyond.json).toEqual([])
    expect(beyond.headers.get('content-range')).toBe('*/25')
    const all = await fresh('GET', '/v1/checks?limit=100')
    expect(all.json).toHaveLength(25)
  })

  it('answers the same shape as GET by id', async () => {
    const list = await fresh('GET', '/v1/checks?limit=2')
    for (const check of list.json) expect((await fresh('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
  })

  it('filters by checkType and by tag (any of the tags given)', async () => {
    const icmp = await fresh('GET', '/v1/checks?checkType=ICMP&limit=100')
    expect(icmp.json.map((c: { name: string }) => c.name)).toEqual(['c0', 'c5', 'c10', 'c15', 'c20'])
    expect(icmp.headers.get('content-range')).toBe('0-4/5')
    const odd = await fresh('GET', '/v1/checks?tag=odd&limit=100')
    expect(odd.json).toHaveLength(10)
    const either = await fresh('GET', '/v1/checks?tag=n5&tag=n10&limit=100')
    expect(either.json.map((c: { name: string }) => c.name)).toEqual(['c5', 'c10'])
    const both = await fresh('GET', '/v1/checks?tag=even&checkType=DNS&limit=3&page=2')
    expect(both.json.map((c: { name: string }) => c.name)).toEqual(['c8', 'c12', 'c14'])
    expect(both.headers.get('content-range')).toBe('3-5/10')
  })

  it('reflects tag changes made by PUT and deletes', async () => {
    const id = ids[1]
    await fresh('PUT', `/v1/checks/dns/${id}`, dnsBody({ name: 'c1', tags: ['moved'] }))
    expect((await fresh('GET', '/v1/checks?tag=moved')).json.map((c: { id: string }) => c.id)).toEqual([id])
    await fresh('DELETE', `/v1/checks/${id}`)
    expect((await fresh('GET', '/v1/checks?tag=moved')).json).toEqual([])
  })

  it('rejects a bad query with source "query"', async () => {
    expect(expect400(await fresh('GET', '/v1/checks?limit=0'), 'query')).toEqual(['limit'])
    expect(expect400(await fresh('GET', '/v1/checks?limit=101'), 'query')).toEqual(['limit'])
    expect(expect400(await fresh('GET', '/v1/checks?page=0&checkType=SMTP'), 'query').sort()).toEqual(['checkType', 'page'])
    expect(expect400(await fresh('GET', '/v1/checks?limit=abc'), 'query')).toEqual(['limit'])
  })
})
