/**
 * Private locations by name: the /v1/private-locations routes, checks and groups that name them,
 * keys bound to one location (which claim, extend and post that location's runs only), and
 * agents serving them: two agents of one location share its runs, one dies holding a run, and
 * every due run of each location runs once; a location without a live agent is alerted to the
 * account's channels once, and its recovery once. The clock of schedules and leases is the test's.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAgent, type Agent } from '../../../src/agent/index.js'
import { openStore, type LocalServer } from '../../../src/server/index.js'
import { runCheck } from '../../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_B, caller, startTestServer, type Call } from '../helpers.js'

// frequency 1, frequencyOffset 5: due at second 30 of every minute
const DUE = Date.parse('2026-03-01T10:00:30Z')
const MINUTE = 60_000
const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

let dns: DnsServerHandle
let server: LocalServer
let call: Call
let clock = DUE - 20_000
const agents: Agent[] = []

beforeAll(async () => {
  dns = await startDnsServer()
  // the office's runs take a while, so that an agent can die holding one
  dns.set('office.private.test', 'A', { records: [{ type: 'A', data: '192.0.2.21' }], delayMs: 100 })
  dns.set('lab.private.test', 'A', { records: [{ type: 'A', data: '192.0.2.22' }] })
  // the scheduler plans (no runner of its own: agents run every run), on the test's clock
  // (alerts go to a webhook on loopback: `allow`, which two accounts would otherwise deny)
  server = await startTestServer({
    clock: () => clock,
    scheduler: true,
    schedulerOptions: { tickMs: 50 },
    metricsToken: METRICS_TOKEN,
    privateTargets: 'allow',
  })
  call = caller(server)
})
afterAll(async () => {
  for (const agent of agents) agent.abort()
  await Promise.all(agents.map((a) => a.done))
  await server?.close()
  await dns?.close()
})

async function createLocation(name: string, slugName: string): Promise<{ id: string; key: string }> {
  const created = await call('POST', '/v1/private-locations', { name, slugName })
  expect(created.status, created.text).toBe(201)
  const key = await call('POST', `/v1/private-locations/${created.json.id}/keys`)
  expect(key.status, key.text).toBe(201)
  expect(key.json.maskedKey).toBe(`...${(key.json.rawKey as string).slice(-4)}`)
  return { id: created.json.id, key: key.json.rawKey }
}

const dnsCheck = (name: string, query: string, extra: Record<string, unknown>) => ({
  name,
  frequency: 1,
  frequencyOffset: 5,
  degradedResponseTime: 5000,
  maxResponseTime: 5000,
  request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  ...extra,
})

async function finals(id: string): Promise<Array<Record<string, any>>> {
  const answer = await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=100`)
  expect(answer.status, answer.text).toBe(200)
  return answer.json
}

/**
 * Moves the clock to `target` 15 seconds at a time, each step once both locations' agents
 * claimed at the clock (their heartbeat lasts 20 s): a location is never seen without a live
 * agent, so none of its runs is skipped as no-agent.
 */
async function advanceTo(target: number): Promise<void> {
  while (clock < target) {
    clock = Math.min(clock + 15_000, target)
    const at = clock
    await until(`the agents claiming at ${new Date(at).toISOString()}`, async () => {
      const all = (await call('GET', '/v1/private-locations')).json as Array<{ slugName: string; lastSeen: string | null }>
      return all.filter((l) => l.slugName === 'office' || l.slugName === 'lab').every((l) => l.lastSeen !== null && Date.parse(l.lastSeen) >= at)
    })
  }
}

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

let office: { id: string; key: string }
let lab: { id: string; key: string }

describe('private locations', () => {
  it('are made, listed, renamed and refused as the reference has them; checks and groups name them by slug', async () => {
    office = await createLocation('Office', 'office')
    lab = await createLocation('Lab', 'lab')
    expect((await call('POST', '/v1/private-locations', { name: 'Again', slugName: 'office' })).status).toBe(409)
    const region = await call('POST', '/v1/private-locations', { name: 'X', slugName: 'eu-west-1' })
    expect(region.status).toBe(400)
    expect(region.json.message).toContain('slugName')
    // the names results give runs of no location are no slug either: a heartbeat's results name `heartbeat`
    for (const reserved of ['local', 'heartbeat']) {
      const refused = await call('POST', '/v1/private-locations', { name: 'X', slugName: reserved })
      expect(refused.status, reserved).toBe(400)
      expect(refused.json.message).toContain(`"${reserved}" is reserved`)
    }
    const listed = await call('GET', '/v1/private-locations')
    expect(listed.json.map((l: { slugName: string }) => l.slugName)).toEqual(['office', 'lab'])
    expect(listed.json[0]).toMatchObject({
      name: 'Office',
      icon: 'location',
      proxyUrl: null,
      agentCount: 0,
      lastSeen: null,
      keys: [{ maskedKey: expect.stringMatching(/^\.\.\./) }],
    })
    expect(JSON.stringify(listed.json)).not.toContain(office.key)
    // the account's keys name the location a key of one serves (and never show the key)
    const keys = await call('GET', '/v1/keys')
    expect(
      keys.json
        .filter((k: { privateLocationId: string | null }) => k.privateLocationId !== null)
        .map((k: { privateLocationId: string }) => k.privateLocationId)
        .sort(),
    ).toEqual([office.id, lab.id].sort())
    expect(JSON.stringify(keys.json)).not.toContain(office.key)
    const renamed = await call('PUT', `/v1/private-locations/${lab.id}`, { name: 'The lab', icon: 'flask' })
    expect(renamed.json).toMatchObject({ name: 'The lab', slugName: 'lab', icon: 'flask' })
    expect((await call('PUT', `/v1/private-locations/${lab.id}`, { name: 'Lab', slugName: 'lab-2' })).status).toBe(400)
    // another account sees none of them
    expect((await caller(server, KEY_B)('GET', `/v1/private-locations/${office.id}`)).status).toBe(404)

    const unknown = await call('POST', '/v1/checks/dns', dnsCheck('nowhere', 'lab.private.test', { privateLocations: ['attic'] }))
    expect(unknown.status).toBe(400)
    expect(unknown.json.message).toContain('privateLocations.0')
    expect(unknown.json.message).toContain('private location that does not exist')
    const group = await call('POST', '/v1/check-groups', { name: 'in the lab', privateLocations: ['lab'] })
    expect(group.status, group.text).toBe(201)
    expect(group.json.privateLocations).toEqual(['lab'])
    expect((await call('POST', '/v1/check-groups', { name: 'nowhere', privateLocations: ['attic'] })).status).toBe(400)
    // named by a group: not deleted
    const refused = await call('DELETE', `/v1/private-locations/${lab.id}`)
    expect(refused.status).toBe(409)
    expect(refused.json.message).toContain(`check groups ${group.json.id}`)
    expect((await call('DELETE', `/v1/check-groups/${group.json.id}`)).status).toBe(204)
    const spare = await createLocation('Spare', 'spare')
    expect((await call('DELETE', `/v1/private-locations/${spare.id}`)).status).toBe(204)
    // its keys went with it
    expect((await caller(server, spare.key)('POST', '/v1/agent/claim', { agentId: 'x', locations: ['spare'] })).status).toBe(401)
  })

  it("a key of a location claims, extends and posts that location's runs only; other keys none of them", async () => {
    const check = await call('POST', '/v1/checks/dns', dnsCheck('triggered', 'lab.private.test', { activated: false, privateLocations: ['office', 'lab'] }))
    expect(check.status, check.text).toBe(201)
    expect(check.json.privateLocations).toEqual(['office', 'lab'])
    expect((await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })).status).toBe(201)
    const asOffice = caller(server, office.key)
    const asLab = caller(server, lab.key)

    const wrong = await asOffice('POST', '/v1/agent/claim', { agentId: 'o', locations: ['office', 'lab'] })
    expect(wrong.status).toBe(403)
    expect(wrong.json.message).toContain('key of the private location "office": it claims that location\'s runs only (got "lab")')
    const general = await call('POST', '/v1/agent/claim', { agentId: 'g', locations: ['office'] })
    expect(general.status).toBe(403)
    expect(general.json.message).toContain('"office" is a private location')
    // a location key is an agent key: nothing but the agent routes
    expect((await asOffice('GET', '/v1/checks')).status).toBe(403)

    const claimed = await asOffice('POST', '/v1/agent/claim', { agentId: 'o', locations: ['office'], leaseSeconds: 10 })
    expect(claimed.status, claimed.text).toBe(200)
    expect(claimed.json.runs.map((r: { location: string }) => r.location)).toEqual(['office'])
    const run = claimed.json.runs[0]
    const result = await runCheck(run.check, { location: run.location })
    for (const other of [asLab, call]) {
      const posted = await other('POST', `/v1/agent/runs/${run.runId}/result`, { result })
      expect(posted.status).toBe(403)
      expect(posted.json.message).toContain('of the location "office", which this key does not serve')
      expect((await other('POST', `/v1/agent/runs/${run.runId}/extend`, { leaseSeconds: 10 })).status).toBe(403)
    }
    expect((await asOffice('POST', `/v1/agent/runs/${run.runId}/result`, { result })).status).toBe(204)
    const [final] = await finals(check.json.id)
    expect(final.runLocation).toBe('office')
    // the lab's run is still the lab's
    const labRun = (await asLab('POST', '/v1/agent/claim', { agentId: 'l', locations: ['lab'], leaseSeconds: 10 })).json.runs[0]
    expect(labRun.location).toBe('lab')
    expect((await asLab('POST', `/v1/agent/runs/${labRun.runId}/result`, { result: await runCheck(labRun.check, { location: 'lab' }) })).status).toBe(204)
    // keys of a location are listed with it and removed one by one
    const keys = (await call('GET', `/v1/private-locations/${office.id}`)).json.keys
    expect(keys).toHaveLength(1)
    expect((await call('DELETE', `/v1/private-locations/${lab.id}/keys/${keys[0].id}`)).status).toBe(404)
  })

  it('an agent whose key is of another location stops at once, saying so', async () => {
    const lines: string[] = []
    const agent = await startAgent({
      apiUrl: server.url,
      apiKey: office.key,
      locations: ['lab'],
      healthPort: 0,
      healthHost: '127.0.0.1',
      pollIntervalMs: 50,
      log: () => undefined,
      warn: (line) => lines.push(line),
    })
    expect(await agent.done).toBe(1)
    expect(lines.join('\n')).toContain('key of the private location "office"')
  })

  it('two agents of one location and one of another: one dies holding a run, and every due run of each location runs once', async () => {
    const ran = new Map<string, number>()
    const start = async (agentId: string, key: string, location: string) => {
      const agent = await startAgent({
        apiUrl: server.url,
        apiKey: key,
        locations: [location],
        agentId,
        healthPort: 0,
        healthHost: '127.0.0.1',
        concurrency: 1,
        pollIntervalMs: 50,
        leaseSeconds: 10,
        warn: () => undefined,
        log: (line) => {
          if (/ (PASSED|DEGRADED|FAILED) /.test(line)) ran.set(agentId, (ran.get(agentId) ?? 0) + 1)
        },
      })
      agents.push(agent)
      return agent
    }
    const office1 = await start('office-1', office.key, 'office')
    const office2 = await start('office-2', office.key, 'office')
    await start('lab-1', lab.key, 'lab')
    // the checks are first seen at 10:00:10: their runs of 09:59:30 (minute -1) are planned at once
    const officeChecks: string[] = []
    for (let i = 0; i < 4; i++) {
      const made = await call('POST', '/v1/checks/dns', dnsCheck(`office ${i}`, 'office.private.test', { privateLocations: ['office'] }))
      expect(made.status, made.text).toBe(201)
      officeChecks.push(made.json.id)
    }
    const labCheck = (await call('POST', '/v1/checks/dns', dnsCheck('lab', 'lab.private.test', { privateLocations: ['lab'] }))).json.id as string
    // a location no agent serves: its runs are counted as skipped, no-agent
    await createLocation('Attic', 'attic')
    const atticCheck = (await call('POST', '/v1/checks/dns', dnsCheck('attic', 'lab.private.test', { privateLocations: ['attic'] }))).json.id as string
    const all = [...officeChecks, labCheck]
    const everyOne = (n: number) => async () => (await Promise.all(all.map(finals))).every((list) => list.length === n)
    await until('the runs of minute -1', everyOne(1))

    for (let minute = 0; minute < 2; minute++) {
      await advanceTo(DUE + minute * MINUTE)
      await until(`the runs of minute ${minute}`, everyOne(minute + 2))
    }
    // both agents of the office took some of its runs
    expect(ran.get('office-1')).toBeGreaterThan(0)
    expect(ran.get('office-2')).toBeGreaterThan(0)
    const health = (await call('GET', `/v1/private-locations/${office.id}`)).json
    expect(health).toMatchObject({ agentCount: 2, lastSeen: expect.any(String) })

    // the third minute: office-2 dies with a run in flight; its lease runs out and office-1 runs it
    await advanceTo(DUE + 2 * MINUTE)
    await until('office-2 holding a run', () => office2.stats().claimed > office2.stats().ran)
    office2.abort()
    expect(await office2.done).not.toBeUndefined()
    await advanceTo(clock + 11_000)
    await until('the runs of minute 2', everyOne(4))
    for (let minute = 3; minute < 5; minute++) {
      await advanceTo(DUE + minute * MINUTE)
      await until(`the runs of minute ${minute}`, everyOne(minute + 2))
    }
    // once each: no due run twice, none missing, each in its location
    for (const id of all) {
      const list = await finals(id)
      expect(list).toHaveLength(6)
      expect(new Set(list.map((r) => r.runLocation))).toEqual(new Set([id === labCheck ? 'lab' : 'office']))
      const minutes = list.map((r) => Math.floor((Date.parse(r.startedAt) - DUE) / MINUTE)).sort()
      expect(minutes).toEqual([-1, 0, 1, 2, 3, 4])
    }
    expect(office1.ready()).toBe(true)
    // the attic's runs: none ran, each counted as skipped for want of an agent
    expect(await finals(atticCheck)).toEqual([])
    const skipped = (
      await call('GET', `/v1/scheduler/skipped-runs?from=${new Date(DUE - MINUTE).toISOString()}&to=${new Date(DUE + 5 * MINUTE).toISOString()}`)
    ).json
    expect(skipped.byReason).toMatchObject({ 'no-agent': 6, late: 0 })
    expect(skipped.skipped).toEqual([expect.objectContaining({ checkId: atticCheck, location: 'attic', reason: 'no-agent', count: 6 })])
    // office-2's heartbeat ran out: one agent alive there now
    expect((await call('GET', `/v1/private-locations/${office.id}`)).json.agentCount).toBe(1)
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
    expect(metrics).toMatch(/^monitors_private_location_agents\{account="acc-a",location="office"\} 1$/m)
    expect(metrics).toMatch(/^monitors_private_location_agents\{account="acc-a",location="attic"\} 0$/m)
    const skippedLines = metrics
      .split('\n')
      .filter((l) => l.startsWith('monitors_scheduler_runs_skipped_total{') && l.includes('location="attic"') && l.includes('reason="no-agent"'))
    expect(skippedLines, metrics).toEqual([expect.stringMatching(/ 6$/)])
  }, 90_000)

  it("a location without a live agent for 5 minutes is alerted to the account's channels once, and its recovery once an agent claims", async () => {
    // a webhook of the account on loopback: what it was sent about the cellar
    const { received, url, close } = await startHooks('cellar')
    try {
      const channel = await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url } })
      expect(channel.status, channel.text).toBe(201)
      const cellar = await createLocation('Cellar', 'cellar')
      const since = clock
      const kinds = () => received.map((e) => e.alertType)
      // no agent for less than the set time: nothing (the office and lab agents claim at every step)
      await advanceTo(since + 4 * MINUTE + 30_000)
      expect(kinds()).toEqual([])
      await advanceTo(since + 5 * MINUTE + 30_000)
      await until('the no-agent alert', () => received.length > 0)
      // one alert for the outage, however many ticks see it go on
      await advanceTo(clock + MINUTE)
      expect(kinds()).toEqual(['ALERT_NO_AGENT'])
      expect(received[0]).toMatchObject({
        title: 'Private location Cellar has no live agent',
        privateLocationId: cellar.id,
        runLocation: 'cellar',
        hasFailures: true,
        errorMessage: expect.stringMatching(/^No agent of cellar has claimed for \d+ minutes$/),
      })
      // an agent claims: the recovery, once
      const agent = await startAgent({
        apiUrl: server.url,
        apiKey: cellar.key,
        locations: ['cellar'],
        agentId: 'cellar-1',
        healthPort: 0,
        healthHost: '127.0.0.1',
        concurrency: 1,
        pollIntervalMs: 50,
        leaseSeconds: 10,
        warn: () => undefined,
        log: () => undefined,
      })
      agents.push(agent)
      await until('the recovery', () => received.length > 1)
      // and no other, however many ticks see the agent alive
      await advanceTo(clock + 30_000)
      expect((await call('GET', `/v1/private-locations/${cellar.id}`)).json.agentCount).toBe(1)
      expect(kinds()).toEqual(['ALERT_NO_AGENT', 'ALERT_NO_AGENT_RECOVERY'])
      expect(received[1]).toMatchObject({ title: 'Private location Cellar has a live agent again', privateLocationId: cellar.id, hasFailures: false })
      expect(received[1].id).not.toBe(received[0].id)
    } finally {
      await close()
    }
  }, 60_000)
})

/** A webhook receiver on loopback: the events it was sent about one location, in order. */
async function startHooks(slug: string): Promise<{ received: Array<Record<string, any>>; url: string; close: () => Promise<unknown> }> {
  const received: Array<Record<string, any>> = []
  const hooks = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      const event = JSON.parse(body) as Record<string, any>
      if (event.privateLocationSlugName === slug) received.push(event)
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve))
  return {
    received,
    url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`,
    close: () => new Promise((resolve) => hooks.close(resolve)),
  }
}

describe('private locations on one database served by two processes', () => {
  it('alert a location without a live agent once, and its recovery once, whichever scheduler sees it first', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'monitors-private-locations-'))
    let now = DUE
    const options = {
      dbPath: join(dir, 'db.sqlite'),
      clock: () => now,
      scheduler: true,
      schedulerOptions: { tickMs: 5 },
      privateTargets: 'allow' as const,
      noAgentAlertMinutes: 2,
    }
    const a = await startTestServer(options)
    const b = await startTestServer(options)
    const hooks = await startHooks('shed')
    let agent: Agent | undefined
    try {
      const api = caller(a)
      expect((await api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hooks.url } })).status).toBe(201)
      const shed = (await api('POST', '/v1/private-locations', { name: 'Shed', slugName: 'shed' })).json
      const key = (await api('POST', `/v1/private-locations/${shed.id}/keys`)).json.rawKey as string
      // the outage begins at DUE, as the first sweep of either scheduler sees it (the clock stands
      // still until the database says so: a loaded machine may not tick for a while)
      const store = await openStore(options.dbPath)
      try {
        await until('the outage seen at DUE', async () => (await store.privateLocations.all()).some((l) => l.id === shed.id && l.noAgentSince === DUE))
      } finally {
        await store.close()
      }
      now = DUE + 2 * MINUTE - 1000
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(hooks.received).toEqual([])
      now = DUE + 2 * MINUTE
      await until('the no-agent alert', () => hooks.received.length > 0)
      await new Promise((resolve) => setTimeout(resolve, 200)) // both schedulers tick many times
      expect(hooks.received.map((e) => e.alertType)).toEqual(['ALERT_NO_AGENT'])
      agent = await startAgent({
        apiUrl: b.url,
        apiKey: key,
        locations: ['shed'],
        agentId: 'shed-1',
        healthPort: 0,
        healthHost: '127.0.0.1',
        concurrency: 1,
        pollIntervalMs: 50,
        leaseSeconds: 10,
        warn: () => undefined,
        log: () => undefined,
      })
      await until('the recovery', () => hooks.received.length > 1)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(hooks.received.map((e) => e.alertType)).toEqual(['ALERT_NO_AGENT', 'ALERT_NO_AGENT_RECOVERY'])
    } finally {
      agent?.abort()
      await agent?.done
      await hooks.close()
      await a.close()
      await b.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
