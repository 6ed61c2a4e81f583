/**
 * Check groups (/v1/check-groups): the account's own (another's answers 404), a group with checks
 * cannot be deleted, its checks answered with the group's settings applied, and those settings
 * applied when the checks run: the group's locations, its alert channels (a channel the check
 * names too is alerted once), a deactivated group runs none of its checks; the group's badge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { eventually, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from '../alerts/alerts-helpers.js'
import { caller, KEY_A, KEY_B } from '../helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

const ok = (query: string) => dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
const fail = (query: string) => dns.set(query, 'A', { rcode: 'SERVFAIL' })

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50, backoffMs: 50, timeoutMs: 5000 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

async function createGroup(body: Record<string, unknown>): Promise<any> {
  const answer = await bench.call('POST', '/v1/check-groups', body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

describe('/v1/check-groups', () => {
  it("creates a group with the reference's defaults, reads, lists, updates it; its checks are listed by id; a group with checks is not deleted (409)", async () => {
    const group = await createGroup({ name: 'API', locations: ['eu-west-1'], tags: ['api'] })
    expect(group).toMatchObject({
      id: expect.any(Number),
      name: 'API',
      activated: true,
      muted: false,
      concurrency: 3,
      locations: ['eu-west-1'],
      tags: ['api'],
      apiCheckDefaults: { headers: [], queryParameters: [], assertions: [] },
      alertChannelSubscriptions: [],
      checks: [],
      updated_at: null,
    })
    const check = await bench.createCheck('member.test', { name: 'Member', groupId: group.id, groupOrder: 1 })
    expect((await bench.call('GET', `/v1/check-groups/${group.id}`)).json.checks).toEqual([check])
    expect((await bench.call('GET', '/v1/check-groups')).json.map((g: any) => g.id)).toContain(group.id)
    expect((await bench.call('GET', '/v1/check-groups?tag=api')).json.map((g: any) => g.id)).toEqual([group.id])

    const updated = await bench.call('PUT', `/v1/check-groups/${group.id}`, { name: 'API v2', locations: ['us-east-1'], concurrency: 1 })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.json).toMatchObject({
      id: group.id,
      name: 'API v2',
      concurrency: 1,
      locations: ['us-east-1'],
      checks: [check],
      updated_at: expect.any(String),
    })

    const refused = await bench.call('DELETE', `/v1/check-groups/${group.id}`)
    expect(refused.status).toBe(409)
    expect(refused.json.message).toContain('Member')
    expect((await bench.call('DELETE', `/v1/checks/${check}`)).status).toBe(204)
    expect((await bench.call('DELETE', `/v1/check-groups/${group.id}`)).status).toBe(204)
    expect((await bench.call('GET', `/v1/check-groups/${group.id}`)).status).toBe(404)
  })

  it('bad bodies are 400s naming the field', async () => {
    const noName = await bench.call('POST', '/v1/check-groups', { locations: ['eu-west-1'] })
    expect(noName.status).toBe(400)
    expect(noName.json.attributes.keys).toEqual(['name'])
    const badConcurrency = await bench.call('POST', '/v1/check-groups', { name: 'x', concurrency: 0 })
    expect(badConcurrency.json.attributes.keys).toEqual(['concurrency'])
    const badChannel = await bench.call('POST', '/v1/check-groups', { name: 'x', alertChannelSubscriptions: [{ alertChannelId: 987654, activated: true }] })
    expect(badChannel.status).toBe(400)
    expect(badChannel.json.attributes.keys).toEqual(['alertChannelSubscriptions.0.alertChannelId'])
    expect((await bench.call('GET', '/v1/check-groups/abc')).status).toBe(400)
  })

  it("a check of any type naming another account's group, or no group, is a 400 naming groupId on POST and PUT; its own group is taken", async () => {
    const other = caller(bench.server, KEY_B)
    const theirs = await other('POST', '/v1/check-groups', { name: 'Theirs', locations: ['ap-south-1'], activated: false })
    expect(theirs.status).toBe(201)
    const mine = await createGroup({ name: 'Mine for every type' })
    const script = "import { test } from '@playwright/test'\ntest('x', async () => {})\n"
    const bodies: Record<string, Record<string, unknown>> = {
      dns: { name: 'g dns', request: { query: 'example.com' } },
      icmp: { name: 'g icmp', request: { hostname: 'example.com' }, heartbeat: {}, script: '' },
      api: { name: 'g api', request: { url: 'https://example.com/', method: 'GET' } },
      tcp: { name: 'g tcp', request: { hostname: 'example.com', port: 443 } },
      url: { name: 'g url', request: { url: 'https://example.com/' } },
      browser: { name: 'g browser', script },
      multistep: { name: 'g multistep', script },
      playwright: { name: 'g playwright', files: [{ path: 'tests/a.spec.ts', content: script }] },
      heartbeat: { name: 'g heartbeat', heartbeat: { period: 1, periodUnit: 'hours', grace: 30, graceUnit: 'minutes' } },
    }
    for (const [route, body] of Object.entries(bodies)) {
      const base = { ...body, activated: false }
      for (const groupId of [theirs.json.id, 987_654_321]) {
        const refused = await bench.call('POST', `/v1/checks/${route}`, { ...base, groupId })
        expect(refused.status, `${route} ${refused.text}`).toBe(400)
        expect(refused.json.attributes).toMatchObject({ source: 'payload', keys: ['groupId'] })
        expect(refused.json.message).toBe(`groupId: refers to a check group that does not exist (got ${groupId}): create it with POST /v1/check-groups`)
      }
      const created = await bench.call('POST', `/v1/checks/${route}`, { ...base, groupId: mine.id })
      expect(created.status, `${route} ${created.text}`).toBe(201)
      const put = await bench.call('PUT', `/v1/checks/${route}/${created.json.id}`, { ...base, groupId: theirs.json.id })
      expect(put.status, `${route} ${put.text}`).toBe(400)
      expect(put.json.attributes.keys).toEqual(['groupId'])
      expect((await bench.call('GET', `/v1/checks/${created.json.id}`)).json.groupId).toBe(mine.id)
      // a schema problem and the group are named together
      const both = await bench.call('PUT', `/v1/checks/${route}/${created.json.id}`, { ...base, name: '', groupId: theirs.json.id })
      expect(both.json.attributes.keys).toEqual(['name', 'groupId'])
      expect((await bench.call('PUT', `/v1/checks/${route}/${created.json.id}`, { ...base, groupId: null })).status).toBe(200)
      expect((await bench.call('DELETE', `/v1/checks/${created.json.id}`)).status).toBe(204)
    }
    expect((await other('GET', `/v1/check-groups/${theirs.json.id}`)).json.checks).toEqual([])
  })

  it("another account's group answers 404 to read, update, delete, its checks and its badge, exactly like a missing one", async () => {
    const group = await createGroup({ name: 'Mine' })
    const other = caller(bench.server, KEY_B)
    for (const id of [group.id, 999_999]) {
      const answers = [
        await other('GET', `/v1/check-groups/${id}`),
        await other('PUT', `/v1/check-groups/${id}`, { name: 'Stolen' }),
        await other('DELETE', `/v1/check-groups/${id}`),
        await other('GET', `/v1/check-groups/${id}/checks`),
        await other('GET', `/v1/badges/groups/${id}`),
      ]
      expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404])
      expect(answers[0].json.message).toBe('Check group not found')
    }
    expect((await other('GET', '/v1/check-groups')).json.map((g: any) => g.name)).not.toContain('Mine')
    expect((await bench.call('GET', `/v1/check-groups/${group.id}`)).json.name).toBe('Mine')
  })
})

describe('group settings applied', () => {
  it("GET …/checks answers the checks with the group's settings applied: locations where the check has none, variables merged (the check's win), secrets masked", async () => {
    const group = await createGroup({
      name: 'Applied',
      locations: ['ap-south-1', 'eu-west-1'],
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 5, maxRetries: 1 },
      environmentVariables: [
        { key: 'A', value: 'group' },
        { key: 'TOKEN', value: 'GROUP-SECRET', secret: true },
      ],
    })
    const bare = await bench.createCheck('bare.test', { name: 'Bare', groupId: group.id, groupOrder: 2 })
    const own = await bench.createCheck('own.test', { name: 'Own', groupId: group.id, groupOrder: 1, locations: ['us-east-1'] })
    const answer = await bench.call('GET', `/v1/check-groups/${group.id}/checks`)
    expect(answer.status).toBe(200)
    expect(answer.text).not.toContain('GROUP-SECRET')
    expect(answer.json.map((c: any) => [c.id, c.locations])).toEqual([
      [own, ['us-east-1']],
      [bare, ['ap-south-1', 'eu-west-1']],
    ])
    expect(answer.json[1].retryStrategy).toMatchObject({ type: 'FIXED', maxRetries: 1 })
    expect(answer.json[1].environmentVariables.map((v: any) => [v.key, v.value])).toEqual([
      ['A', 'group'],
      ['TOKEN', ''],
    ])
    const one = await bench.call('GET', `/v1/check-groups/${group.id}/checks/${bare}`)
    expect(one.json.locations).toEqual(['ap-south-1', 'eu-west-1'])
    // the check itself is answered as stored
    expect((await bench.call('GET', `/v1/checks/${bare}`)).json.locations ?? null).toBeNull()
  })

  it("a check without locations runs in the group's; its failure goes to the group's channels and its own, a channel both name once", async () => {
    const shared = await bench.call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'shared', url: `${hooks.url}/grp-shared` } })
    const groupOnly = await bench.call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'group', url: `${hooks.url}/grp-group` } })
    const checkOnly = await bench.call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'check', url: `${hooks.url}/grp-check` } })
    const group = await createGroup({
      name: 'Alerting',
      locations: ['ap-south-1', 'us-west-1'],
      alertChannelSubscriptions: [
        { alertChannelId: shared.json.id, activated: true },
        { alertChannelId: groupOnly.json.id, activated: true },
      ],
    })
    const query = 'grouped-failure.test'
    const id = await bench.createCheck(query, {
      name: 'Grouped failure',
      groupId: group.id,
      alertChannelSubscriptions: [
        { alertChannelId: shared.json.id, activated: true },
        { alertChannelId: checkOnly.json.id, activated: true },
      ],
    })
    fail(query)
    const done = (await bench.runOnce(id)) as any
    expect(done.status).toBe('FAILED')
    expect([...done.runLocations].sort()).toEqual(['ap-south-1', 'us-west-1'])
    await hooks.waitFor('/grp-shared', 1)
    await hooks.waitFor('/grp-group', 1)
    await hooks.waitFor('/grp-check', 1)
    const deliveries = await eventually(
      () => bench.deliveries(id),
      (l) => l.length >= 3 && l.every((d: any) => d.status !== 'PENDING'),
    )
    expect(deliveries.map((d: any) => d.channel.alertChannelId).sort()).toEqual([shared.json.id, groupOnly.json.id, checkOnly.json.id].sort())
    expect(hooks.received('/grp-shared')).toHaveLength(1)
    ok(query)
  })

  it("a muted group holds back its checks' alerts", async () => {
    const hook = await bench.call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'muted', url: `${hooks.url}/grp-muted` } })
    const group = await createGroup({ name: 'Muted', muted: true, alertChannelSubscriptions: [{ alertChannelId: hook.json.id, activated: true }] })
    const query = 'grouped-muted.test'
    const id = await bench.createCheck(query, { name: 'Muted member', groupId: group.id })
    fail(query)
    expect((await bench.runOnce(id)).status).toBe('FAILED')
    const alerting = await bench.createCheck('grouped-muted-control.test', {
      name: 'Control',
      alertChannelSubscriptions: [{ alertChannelId: hook.json.id, activated: true }],
    })
    fail('grouped-muted-control.test')
    await bench.runOnce(alerting)
    // the control's failure is delivered: the muted one's, recorded before it, would have been too
    await hooks.waitFor('/grp-muted', 1)
    expect(await bench.deliveries(id)).toEqual([])
  })

  it("the group badge is its checks' worst state, paused when the group is deactivated", async () => {
    const group = await createGroup({ name: 'Badge group' })
    const empty = await bench.call('GET', `/v1/badges/groups/${group.id}`)
    expect(empty.status).toBe(200)
    expect(empty.headers.get('content-type')).toContain('image/svg+xml')
    expect(empty.text).toContain('Badge group')
    expect(empty.text).toContain('unknown')
    ok('badge-good.test')
    fail('badge-bad.test')
    const good = await bench.createCheck('badge-good.test', { name: 'Good', groupId: group.id })
    const bad = await bench.createCheck('badge-bad.test', { name: 'Bad', groupId: group.id })

    await bench.runOnce(good)
    expect((await bench.call('GET', `/v1/badges/groups/${group.id}`)).text).toContain('passing')
    await bench.runOnce(bad)
    expect((await bench.call('GET', `/v1/badges/groups/${group.id}`)).text).toContain('failing')
    expect((await bench.call('PUT', `/v1/check-groups/${group.id}`, { name: 'Badge group', activated: false })).status).toBe(200)
    expect((await bench.call('GET', `/v1/badges/groups/${group.id}`)).text).toContain('paused')
  })
})

describe('API-check defaults of a group', () => {
  it("an API check runs with the group's base URL ({{GROUP_BASE_URL}}), its headers and query parameters (the check's win by key), its variables and its assertions", async () => {
    const http: HttpServerHandle = await startHttpServer()
    try {
      http.route('/v1/health', { status: 200, body: { ok: true } })
      const group = await createGroup({
        name: 'API defaults',
        environmentVariables: [{ key: 'TENANT', value: 'acme' }],
        apiCheckDefaults: {
          url: `${http.origin}/v1`,
          headers: [
            { key: 'X-Group', value: 'group' },
            { key: 'X-Both', value: 'group' },
          ],
          queryParameters: [{ key: 'tenant', value: '{{TENANT}}' }],
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '201' }],
        },
      })
      const check = await bench.call('POST', '/v1/checks/api', {
        name: 'Group API',
        activated: false,
        groupId: group.id,
        request: {
          method: 'GET',
          url: '{{GROUP_BASE_URL}}/health',
          headers: [{ key: 'X-Both', value: 'check' }],
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        },
      })
      expect(check.status, check.text).toBe(201)
      const done = (await bench.runOnce(check.json.id)) as any
      const seen = http.requests.filter((r) => r.path.startsWith('/v1/health'))
      expect(seen.length).toBeGreaterThanOrEqual(1)
      expect(seen[0].path).toBe('/v1/health?tenant=acme')
      expect(seen[0].headers['x-group']).toBe('group')
      expect(seen[0].headers['x-both']).toBe('check')
      // the group's assertion (201) is added to the check's (200): the run fails on it
      expect(done.status).toBe('FAILED')
      expect(done.results.find((r: any) => r.resultType === 'FINAL').error).toContain('201')
    } finally {
      await http.close()
    }
  })
})

describe('the dashboard', () => {
  it("lists each check group with its checks' worst state, linking to its page", async () => {
    const group = await createGroup({ name: 'Dashboard group', locations: ['eu-west-1'] })
    fail('dashboard-member.test')
    const member = await bench.createCheck('dashboard-member.test', { name: 'Dashboard member', groupId: group.id })
    await bench.runOnce(member)
    const paused = await createGroup({ name: 'Dashboard paused', activated: false })
    const login = await fetch(`${bench.server.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: bench.server.url },
      body: new URLSearchParams({ apiKey: KEY_A }).toString(),
    })
    expect(login.status).toBe(303)
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
    const html = await (await fetch(`${bench.server.url}/`, { headers: { cookie } })).text()
    expect(html).toContain('<h2>Check groups</h2>')
    expect(html).toMatch(
      new RegExp(
        `<tr data-group-id="${group.id}"><td><a href="/dashboard/groups/${group.id}">Dashboard group</a></td><td class="state-failing">failing</td><td>1</td><td>eu-west-1</td></tr>`,
      ),
    )
    expect(html).toMatch(
      new RegExp(
        `<tr data-group-id="${paused.id}"><td><a href="/dashboard/groups/${paused.id}">Dashboard paused</a></td><td class="state-paused">paused</td><td>0</td>`,
      ),
    )
  })
})
