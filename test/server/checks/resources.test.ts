import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIME_IDS, THEME_COLOR_FIELDS } from '../../../src/schema/index.js'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, expect400, startTestServer, type Call } from '../helpers.js'

let server: LocalServer
let api: Call

beforeAll(async () => {
  server = await startTestServer({ ipv6s: ['2001:db8::1', '2001:db8::2'] })
  api = caller(server)
})
afterAll(() => server.close())

describe('environment variables', () => {
  it('creates, reads, lists, updates and deletes', async () => {
    const created = await api('POST', '/v1/variables', { key: 'API_URL', value: 'https://example.com' })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ key: 'API_URL', value: 'https://example.com', locked: false, secret: false, updated_at: null })
    expect((await api('GET', '/v1/variables/API_URL')).json).toEqual(created.json)
    const updated = await api('PUT', '/v1/variables/API_URL', { value: 'https://example.org', locked: true })
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ key: 'API_URL', value: 'https://example.org', locked: true, secret: false })
    expect(updated.json.updated_at).not.toBeNull()
    const list = await api('GET', '/v1/variables')
    expect(list.json.map((v: { key: string }) => v.key)).toContain('API_URL')
    expect((await api('DELETE', '/v1/variables/API_URL')).status).toBe(204)
    expect((await api('GET', '/v1/variables/API_URL')).json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Variable not found' })
    expect((await api('DELETE', '/v1/variables/API_URL')).status).toBe(404)
    expect((await api('PUT', '/v1/variables/API_URL', { value: 'x' })).status).toBe(404)
  })

  it('answers 409 for a key that exists', async () => {
    await api('POST', '/v1/variables', { key: 'TWICE', value: '1' })
    const again = await api('POST', '/v1/variables', { key: 'TWICE', value: '2' })
    expect(again.status).toBe(409)
    expect(again.json).toEqual({ statusCode: 409, error: 'Conflict', message: 'Variable with key TWICE already exists' })
    expect((await api('GET', '/v1/variables/TWICE')).json.value).toBe('1')
  })

  it('never shows a secret value, and a secret stays secret', async () => {
    const created = await api('POST', '/v1/variables', { key: 'TOKEN', value: 's3cr3t', secret: true })
    expect(created.json).toMatchObject({ value: '', secret: true })
    expect((await api('GET', '/v1/variables/TOKEN')).json.value).toBe('')
    const listed = (await api('GET', '/v1/variables?limit=100')).json.find((v: { key: string }) => v.key === 'TOKEN')
    expect(listed.value).toBe('')
    expect(JSON.stringify(await api('GET', '/v1/variables?limit=100'))).not.toContain('s3cr3t')
    const unlock = await api('PUT', '/v1/variables/TOKEN', { value: 'other', secret: false })
    expect(expect400(unlock, 'payload')).toEqual(['secret'])
    const updated = await api('PUT', '/v1/variables/TOKEN', { value: 'rotated', secret: true })
    expect(updated.json).toMatchObject({ value: '', secret: true })
  })

  it('validates keys and bodies; the key cannot change', async () => {
    expect(expect400(await api('POST', '/v1/variables', { key: '1ABC', value: 'x' }), 'payload')).toEqual(['key'])
    expect(expect400(await api('POST', '/v1/variables', { key: 'A'.repeat(129), value: 'x' }), 'payload')).toEqual(['key'])
    expect((await api('POST', '/v1/variables', { key: `_${'A'.repeat(127)}`, value: 'x' })).status).toBe(201)
    expect(expect400(await api('POST', '/v1/variables', { key: 'A-B' }), 'payload').sort()).toEqual(['key', 'value'])
    await api('POST', '/v1/variables', { key: 'FIXED', value: 'x' })
    expect(expect400(await api('PUT', '/v1/variables/FIXED', { key: 'OTHER', value: 'y' }), 'payload')).toEqual(['key'])
    expect((await api('PUT', '/v1/variables/FIXED', { key: 'FIXED', value: 'y' })).status).toBe(200)
    expect(expect400(await api('PUT', '/v1/variables/9bad', { value: 'y' }), 'params')).toEqual(['key'])
  })

  it('pages the list', async () => {
    const fresh = await startTestServer()
    try {
      const call = caller(fresh)
      for (let i = 0; i < 12; i++) await call('POST', '/v1/variables', { key: `V${i}`, value: String(i) })
      const first = await call('GET', '/v1/variables')
      expect(first.json).toHaveLength(10)
      expect(first.headers.get('content-range')).toBe('0-9/12')
      const second = await call('GET', '/v1/variables?page=2')
      expect(second.json.map((v: { key: string }) => v.key)).toEqual(['V10', 'V11'])
      expect(expect400(await call('GET', '/v1/variables?limit=101'), 'query')).toEqual(['limit'])
    } finally {
      await fresh.close()
    }
  })
})

describe('status pages and services', () => {
  const theme = Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, '#000000']))

  it('services: create, read, list, update, delete', async () => {
    const created = await api('POST', '/v1/status-pages/services', { name: 'Checkout' })
    expect(created.status).toBe(201)
    expect(Object.keys(created.json).sort()).toEqual(['accountId', 'created_at', 'id', 'name', 'updated_at'])
    expect(created.json).toMatchObject({ name: 'Checkout', accountId: 'acc-a', updated_at: null })
    const id = created.json.id
    expect((await api('GET', `/v1/status-pages/services/${id}`)).json).toEqual(created.json)
    expect((await api('GET', '/v1/status-pages/services')).json.map((s: { id: string }) => s.id)).toContain(id)
    const renamed = await api('PUT', `/v1/status-pages/services/${id}`, { name: 'Payments' })
    expect(renamed.json).toMatchObject({ id, name: 'Payments' })
    expect(expect400(await api('PUT', `/v1/status-pages/services/${id}`, { name: '' }), 'payload')).toEqual(['name'])
    expect((await api('DELETE', `/v1/status-pages/services/${id}`)).status).toBe(204)
    expect((await api('GET', `/v1/status-pages/services/${id}`)).status).toBe(404)
  })

  it('pages: create with cards, read, update exactly as the spec says, delete', async () => {
    const web = (await api('POST', '/v1/status-pages/services', { name: 'Web' })).json
    const apiService = (await api('POST', '/v1/status-pages/services', { name: 'API' })).json
    const created = await api('POST', '/v1/status-pages', {
      name: 'Acme status',
      url: 'acme-status',
      cards: [{ name: 'Frontend', services: [{ id: web.id }] }],
      themeColors: { light: theme, dark: theme },
      customDomain: 'status.acme.test',
    })
    expect(created.status).toBe(201)
    const page = created.json
    expect(page).toMatchObject({
      name: 'Acme status',
      url: 'acme-status',
      defaultTheme: 'AUTO',
      whiteLabel: false,
      isPrivate: false,
      customDomain: 'status.acme.test',
      updated_at: null,
    })
    expect(page.cards).toHaveLength(1)
    expect(page.cards[0]).toMatchObject({ name: 'Frontend', statusPageId: page.id, services: [web] })
    expect(typeof page.cards[0].id).toBe('string')
    expect((await api('GET', `/v1/status-pages/${page.id}`)).json).toEqual(page)

    const updated = await api('PUT', `/v1/status-pages/${page.id}`, {
      name: 'Acme',
      url: 'acme',
      defaultTheme: 'DARK',
      cards: [
        { id: page.cards[0].id, name: 'Frontend', services: [{ id: web.id }, { id: apiService.id }] },
        { name: 'Backend', services: [{ id: apiService.id }] },
      ],
    })
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ id: page.id, name: 'Acme', url: 'acme', defaultTheme: 'DARK', created_at: page.created_at })
    expect('customDomain' in updated.json).toBe(false)
    expect(updated.json.cards[0].id).toBe(page.cards[0].id)
    expect(updated.json.cards[0].services.map((s: { id: string }) => s.id)).toEqual([web.id, apiService.id])
    expect(updated.json.cards[1].name).toBe('Backend')

    // PUT requires name, url and cards
    expect(expect400(await api('PUT', `/v1/status-pages/${page.id}`, {}), 'payload').sort()).toEqual(['cards', 'name', 'url'])
    expect((await api('PUT', '/v1/status-pages/no-such-page', { name: 'n', url: 'nn', cards: [] })).status).toBe(404)

    expect((await api('DELETE', `/v1/status-pages/${page.id}`)).status).toBe(204)
    expect((await api('GET', `/v1/status-pages/${page.id}`)).json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Status page not found' })
  })

  it('cards must reference existing services; a used service cannot be deleted', async () => {
    const used = (await api('POST', '/v1/status-pages/services', { name: 'Used' })).json
    const bad = await api('POST', '/v1/status-pages', {
      name: 'p',
      url: 'refs',
      cards: [
        { name: 'a', services: [{ id: used.id }, { id: 'nope' }] },
        { name: 'b', services: [{ id: 'gone' }] },
      ],
    })
    expect(expect400(bad, 'payload')).toEqual(['cards.0.services.1.id', 'cards.1.services.0.id'])
    const both = await api('POST', '/v1/status-pages', { url: 'refs', cards: [{ name: 'a', services: [{ id: 'nope' }] }] })
    expect(expect400(both, 'payload')).toEqual(['name', 'cards.0.services.0.id'])
    expect((await api('GET', '/v1/status-pages?limit=100')).json.entries.some((p: { url: string }) => p.url === 'refs')).toBe(false)

    const page = (await api('POST', '/v1/status-pages', { name: 'p', url: 'refs', cards: [{ name: 'a', services: [{ id: used.id }] }] })).json
    const blocked = await api('DELETE', `/v1/status-pages/services/${used.id}`)
    expect(blocked.status).toBe(409)
    expect(blocked.json.error).toBe('Conflict')
    await api('PUT', `/v1/status-pages/${page.id}`, { name: 'p', url: 'refs', cards: [] })
    expect((await api('DELETE', `/v1/status-pages/services/${used.id}`)).status).toBe(204)
  })

  it('url is unique per server (409), also across accounts, and must be a slug', async () => {
    expect((await api('POST', '/v1/status-pages', { name: 'p', url: 'taken', cards: [] })).status).toBe(201)
    const again = await api('POST', '/v1/status-pages', { name: 'q', url: 'taken', cards: [] })
    expect(again.status).toBe(409)
    expect(again.json.message).toBe('Status page with url taken already exists')
    const other = caller(server, (await import('../helpers.js')).KEY_B)
    expect((await other('POST', '/v1/status-pages', { name: 'q', url: 'taken', cards: [] })).status).toBe(409)
    const mine = (await api('POST', '/v1/status-pages', { name: 'p', url: 'free-one', cards: [] })).json
    expect((await api('PUT', `/v1/status-pages/${mine.id}`, { name: 'p', url: 'taken', cards: [] })).status).toBe(409)
    expect((await api('PUT', `/v1/status-pages/${mine.id}`, { name: 'p2', url: 'free-one', cards: [] })).status).toBe(200)
    expect(expect400(await api('POST', '/v1/status-pages', { name: 'p', url: 'Not A Slug', cards: [], defaultTheme: 'PINK' }), 'payload').sort()).toEqual([
      'defaultTheme',
      'url',
    ])
  })

  it('lists pages with cursor paging', async () => {
    const fresh = await startTestServer()
    try {
      const call = caller(fresh)
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await call('POST', '/v1/status-pages', { name: `p${i}`, url: `cursor-${i}`, cards: [] })).json.id)
      const first = await call('GET', '/v1/status-pages?limit=2')
      expect(first.json.length).toBe(2)
      expect(first.json.entries.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2))
      expect(first.json.nextId).toBe(ids[2])
      const second = await call('GET', `/v1/status-pages?limit=2&nextId=${first.json.nextId}`)
      expect(second.json.entries.map((p: { id: string }) => p.id)).toEqual(ids.slice(2, 4))
      const last = await call('GET', `/v1/status-pages?limit=2&nextId=${second.json.nextId}`)
      expect(last.json).toMatchObject({ length: 1, nextId: null })
      expect((await call('GET', '/v1/status-pages')).json).toMatchObject({ length: 5, nextId: null })
      expect(expect400(await call('GET', '/v1/status-pages?nextId=unknown'), 'query')).toEqual(['nextId'])
      expect(expect400(await call('GET', '/v1/status-pages?limit=0'), 'query')).toEqual(['limit'])
    } finally {
      await fresh.close()
    }
  })
})

describe('maintenance windows', () => {
  const window = { name: 'Release', tags: ['prod'], startsAt: '2026-03-01T22:00:00Z', endsAt: '2026-03-01T23:00:00Z' }

  it('creates with an integer id, reads, lists, replaces and deletes (204)', async () => {
    const created = await api('POST', '/v1/maintenance-windows', { ...window, repeatInterval: 1, repeatUnit: 'WEEK', repeatEndsAt: '2026-06-01T00:00:00Z' })
    expect(created.status).toBe(201)
    expect(Number.isInteger(created.json.id)).toBe(true)
    expect(created.json).toMatchObject({ ...window, repeatInterval: 1, repeatUnit: 'WEEK', updated_at: null })
    const id = created.json.id
    expect((await api('GET', `/v1/maintenance-windows/${id}`)).json).toEqual(created.json)
    expect((await api('GET', '/v1/maintenance-windows')).json.map((w: { id: number }) => w.id)).toContain(id)
    const replaced = await api('PUT', `/v1/maintenance-windows/${id}`, { ...window, name: 'Moved' })
    expect(replaced.json).toMatchObject({ id, name: 'Moved' })
    expect('repeatUnit' in replaced.json).toBe(false)
    const deleted = await api('DELETE', `/v1/maintenance-windows/${id}`)
    expect(deleted.status).toBe(204)
    expect((await api('GET', `/v1/maintenance-windows/${id}`)).json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Maintenance window not found' })
  })

  it('validates fields and the integer id', async () => {
    const bad = await api('POST', '/v1/maintenance-windows', { name: '', startsAt: 'tomorrow', endsAt: '2026-03-01T21:00:00Z', repeatInterval: 366 })
    expect(expect400(bad, 'payload').sort()).toEqual(['name', 'repeatInterval', 'repeatUnit', 'startsAt'])
    const backwards = await api('POST', '/v1/maintenance-windows', { ...window, endsAt: window.startsAt })
    expect(expect400(backwards, 'payload')).toEqual(['endsAt'])
    expect(expect400(await api('DELETE', '/v1/maintenance-windows/abc'), 'params')).toEqual(['id'])
    expect(expect400(await api('GET', '/v1/maintenance-windows/1.5'), 'params')).toEqual(['id'])
    expect((await api('DELETE', '/v1/maintenance-windows/999999')).status).toBe(404)
  })
})

describe('incidents and incident updates', () => {
  it('full lifecycle: updates newest first, DELETE of an update answers 204', async () => {
    const service = (await api('POST', '/v1/status-pages/services', { name: 'Search' })).json
    const created = await api('POST', '/v1/incidents', { name: 'Search is slow', severity: 'MAJOR', services: [{ id: service.id }] })
    expect(created.status).toBe(201)
    const incident = created.json
    expect(incident).toMatchObject({ name: 'Search is slow', severity: 'MAJOR', incidentUpdates: [], updated_at: null })
    expect(incident.services.map((s: { id: string }) => s.id)).toEqual([service.id])
    const first = await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'INVESTIGATING', description: 'Looking into it' })
    expect(first.status).toBe(201)
    expect(first.json).toMatchObject({ status: 'INVESTIGATING', description: 'Looking into it', notifySubscribers: false, incidentId: incident.id })
    const second = await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'Fixed', notifySubscribers: true })
    const read = await api('GET', `/v1/incidents/${incident.id}`)
    expect(read.json.incidentUpdates.map((u: { id: string }) => u.id)).toEqual([second.json.id, first.json.id])
    const edited = await api('PUT', `/v1/incidents/${incident.id}/updates/${first.json.id}`, { status: 'IDENTIFIED', description: 'Found it' })
    expect(edited.json).toMatchObject({ id: first.json.id, status: 'IDENTIFIED' })
    expect((await api('GET', `/v1/incidents/${incident.id}/updates/${first.json.id}`)).json).toEqual(edited.json)
    const gone = await api('DELETE', `/v1/incidents/${incident.id}/updates/${first.json.id}`)
    expect(gone.status).toBe(204)
    expect((await api('DELETE', `/v1/incidents/${incident.id}/updates/${first.json.id}`)).status).toBe(404)
    expect((await api('GET', `/v1/incidents/${incident.id}`)).json.incidentUpdates).toHaveLength(1)

    const renamed = await api('PUT', `/v1/incidents/${incident.id}`, { name: 'Search was slow', severity: 'MINOR' })
    expect(renamed.json).toMatchObject({ name: 'Search was slow', severity: 'MINOR', services: [] })
    expect(renamed.json.incidentUpdates).toHaveLength(1)
    expect((await api('GET', '/v1/incidents')).json.map((i: { id: string }) => i.id)).toContain(incident.id)
    expect((await api('DELETE', `/v1/incidents/${incident.id}`)).status).toBe(204)
    expect((await api('GET', `/v1/incidents/${incident.id}`)).status).toBe(404)
    expect((await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'x' })).status).toBe(404)
  })

  it('validates bodies, GUID ids and service references', async () => {
    const bad = await api('POST', '/v1/incidents', { name: '', severity: 'SEVERE', services: [{ id: 'nope' }] })
    expect(expect400(bad, 'payload').sort()).toEqual(['name', 'services.0.id', 'severity'])
    const unknownService = await api('POST', '/v1/incidents', { name: 'n', severity: 'MINOR', services: [{ id: 'nope' }] })
    expect(expect400(unknownService, 'payload')).toEqual(['services.0.id'])
    expect(expect400(await api('GET', '/v1/incidents/not-a-guid'), 'params')).toEqual(['id'])
    expect(expect400(await api('DELETE', '/v1/incidents/not-a-guid/updates/also-not'), 'params').sort()).toEqual(['id', 'incidentId'])
    const incident = (await api('POST', '/v1/incidents', { name: 'n', severity: 'CRITICAL' })).json
    const badUpdate = await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'DONE', description: '' })
    expect(expect400(badUpdate, 'payload').sort()).toEqual(['description', 'status'])
    expect((await api('DELETE', `/v1/incidents/${incident.id}/updates/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
  })
})

describe('runtimes and addresses', () => {
  it('lists the six runtimes with every field of the record', async () => {
    const list = await api('GET', '/v1/runtimes')
    expect(list.status).toBe(200)
    expect(list.json.map((r: { name: string }) => r.name)).toEqual([...RUNTIME_IDS])
    for (const runtime of list.json) {
      expect(Object.keys(runtime).sort()).toEqual(['dependencies', 'description', 'multiStepSupport', 'name', 'nodeJsVersion', 'runtimeEndOfLife', 'stage'])
      expect((await api('GET', `/v1/runtimes/${runtime.name}`)).json).toEqual(runtime)
    }
    expect((await api('GET', '/v1/runtimes/2019.01')).json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Runtime not found' })
  })

  it('serves the configured IPv6 list as newline-terminated text', async () => {
    const answer = await api('GET', '/v1/static-ipv6s.txt')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(answer.text).toBe('2001:db8::1\n2001:db8::2\n')
  })

  it("serves this machine's global IPv6 addresses when none are configured", async () => {
    const { globalIpv6Addresses } = await import('../../../src/server/routes/runtimes.js')
    const own = await startTestServer()
    try {
      const answer = await caller(own)('GET', '/v1/static-ipv6s.txt')
      expect(answer.text).toBe(
        globalIpv6Addresses()
          .map((a) => `${a}\n`)
          .join(''),
      )
      for (const line of answer.text.split('\n').filter(Boolean)) expect(line).toMatch(/^[0-9a-f:]+$/)
    } finally {
      await own.close()
    }
  })
})
