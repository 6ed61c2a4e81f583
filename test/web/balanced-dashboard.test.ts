/**
 * The dashboard behind a balancer (docs/security.md): two servers on one database (the same
 * SQLite file, or one PostgreSQL database) behind a round-robin proxy. A log-in made on one
 * server is known to the other (sessions live in the database), a log-out or a revoked key ends
 * it on both; the dashboard's own reads spend none of the key's rate limit, and a view of the
 * checks costs the same few API calls whether the account has 5 checks or 150. Keys with roles
 * log in as they may: a read key sees the pages without their buttons, an agent key not at all.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { KEY_A, caller, dnsBody, type Call } from '../server/helpers.js'
import { recordRuns, seriesOf, type TestClock } from '../server/analytics/analytics-helpers.js'

let dir: string
let one: LocalServer
let two: LocalServer
let balancer: Server
let front: string
const logs: string[] = []
/** per key and window; the admin key makes fewer than 200 requests in all here */
const LIMIT = 300
/** the key the rate-limit tests log in with: its window is theirs alone */
const KEY_VIEW = 'key-view-0123456789abcdef0123456789'

/** Round robin: each request goes to the next server. */
function roundRobin(targets: string[]): Promise<{ server: Server; url: string }> {
  let next = 0
  const server = createServer((req, res) => {
    const target = new URL(targets[next++ % targets.length])
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, connection: 'close' } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => res.writeHead(502).end())
    req.pipe(upstream)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number }
      resolve({ server, url: `http://127.0.0.1:${address.port}` })
    }),
  )
}

let fixedNow: number | undefined
const oneClock: TestClock = { get: () => fixedNow ?? Date.now(), set: (ms) => void (fixedNow = ms) }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-balanced-'))
  const options = {
    dbPath: join(dir, 'shared.db'),
    apiKeys: [
      { key: KEY_A, accountId: 'acc-a' },
      { key: KEY_VIEW, accountId: 'acc-a' },
    ],
    rateLimit: { max: LIMIT, timeWindowMs: 600_000 },
  }
  // server one's clock: real time, except while a test records runs at their past times on it
  one = await startLocalServer({ ...options, clock: () => oneClock.get(), log: (line) => logs.push(`one ${line}`) })
  two = await startLocalServer({ ...options, log: (line) => logs.push(`two ${line}`) })
  ;({ server: balancer, url: front } = await roundRobin([one.url, two.url]))
})
afterAll(async () => {
  await new Promise((resolve) => balancer?.close(resolve))
  await one?.close()
  await two?.close()
  rmSync(dir, { recursive: true, force: true })
})

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const get = (url: string, cookie: string) => fetch(url, { headers: { cookie }, redirect: 'manual' })
const post = (url: string, fields: Record<string, string>, cookie = '') =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: form(fields) })

async function logIn(base: string, apiKey: string): Promise<{ cookie: string; csrf: string }> {
  const answer = await post(`${base}/dashboard/login`, { apiKey })
  expect(answer.status, await answer.clone().text()).toBe(303)
  const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0]
  const home = await (await get(`${base}/`, cookie)).text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(home)?.[1] ?? ''
  expect(csrf, home).not.toBe('')
  return { cookie, csrf }
}

/** An admin key of the account made through the API (each test its own, for its own rate limit). */
async function newKey(role: string): Promise<string> {
  const made = await caller(one, KEY_A)('POST', '/v1/keys', { role, name: `test ${role}` })
  expect(made.status, made.text).toBe(201)
  return made.json.key
}

describe('sessions behind a round-robin balancer', () => {
  it('a log-in made through one server is known to the other, and a log-out ends it on both', async () => {
    const { cookie, csrf } = await logIn(front, KEY_A)
    // several views in a row: they alternate between the two servers
    for (let i = 0; i < 4; i++) {
      const page = await get(`${front}/`, cookie)
      expect(page.status).toBe(200)
      expect(await page.text(), `view ${i + 1}`).toContain('Checks of account acc-a')
    }
    for (const server of [one, two]) expect(await (await get(`${server.url}/`, cookie)).text()).toContain('Checks of account acc-a')

    const out = await post(`${one.url}/dashboard/logout`, { csrf }, cookie)
    expect(out.status).toBe(303)
    for (const server of [one, two, one, two]) expect(await (await get(`${server.url}/`, cookie)).text()).toContain('action="/dashboard/login"')
  })

  it('a revoked key ends its sessions on every server', async () => {
    const key = await newKey('write')
    const { cookie } = await logIn(front, key)
    const id = (await caller(two, KEY_A)('GET', '/v1/keys')).json.find(
      (k: { prefix: string; name: string }) => k.name === 'test write' && key.startsWith(k.prefix),
    ).id
    expect((await caller(two, KEY_A)('DELETE', `/v1/keys/${id}`)).status).toBe(204)
    for (const server of [one, two]) expect(await (await get(`${server.url}/`, cookie)).text()).toContain('action="/dashboard/login"')
  })
})

describe("the dashboard and the key's rate limit", () => {
  let api: Call
  const key = KEY_VIEW
  const ids: string[] = []

  beforeAll(async () => {
    // checks made with the first key, so that the new key's window is untouched
    const admin = caller(one, KEY_A)
    for (let i = 0; i < 5; i++) {
      const made = await admin('POST', '/v1/checks/dns', dnsBody({ name: `check ${i}`, activated: false, locations: ['eu-west-1'] }))
      expect(made.status, made.text).toBe(201)
      ids.push(made.json.id)
    }
    api = caller(two, key)
    // results of one check (before any view: a list keeps its figures a minute)
    const now = Date.now()
    await recordRuns(
      admin,
      ids[1],
      [
        { at: new Date(now - 3_600_000).toISOString(), location: 'eu-west-1', passed: true, responseTime: 40 },
        { at: new Date(now - 1_800_000).toISOString(), location: 'eu-west-1', passed: false, responseTime: 80 },
        { at: new Date(now - 600_000).toISOString(), location: 'eu-west-1', passed: true, responseTime: 120 },
      ],
      oneClock,
    )
    fixedNow = undefined
  })

  it("views spend none of the key's quota: with the quota spent by a client, the dashboard still answers", async () => {
    const { cookie } = await logIn(front, key)
    for (let i = 0; i < 6; i++) expect(await (await get(`${front}/`, cookie)).text()).toContain('5 of 5 checks')
    const first = await api('GET', '/v1/runtimes')
    expect(first.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1))
    // an agent or the CLI sharing the key spends it all
    let answer = first
    for (let i = 0; i < LIMIT && answer.status !== 429; i++) answer = await api('GET', '/v1/runtimes')
    expect(answer.status).toBe(429)
    const page = await (await get(`${front}/`, cookie)).text()
    expect(page).toContain('5 of 5 checks')
    expect(await (await get(`${front}/dashboard/checks/${ids[0]}`, cookie)).text()).toContain('<h1>check 0</h1>')
  })

  it('a view of the checks costs the same API calls with 150 checks as with 5, and shows the figures the analytics route answers', async () => {
    const admin = caller(one, KEY_A)
    const { cookie } = await logIn(one.url, KEY_A)
    const callsOfAView = async () => {
      logs.length = 0
      const html = await (await get(`${one.url}/`, cookie)).text()
      // the page's own line, and the API calls it made in the server
      const calls = logs.filter((l) => l.startsWith('one GET /v1/') || l.startsWith('one POST /v1/'))
      return { html, calls }
    }
    const few = await callsOfAView()
    expect(few.html).toContain('5 of 5 checks')

    const route = seriesOf(await admin('GET', `/v1/analytics/dns/${ids[1]}?quickRange=last24Hours&metrics=availability,total_p50,total_p95`))[0]
    const row = new RegExp(`<tr data-check-id="${ids[1]}">[\\s\\S]*?</tr>`).exec(few.html)?.[0] ?? ''
    expect(route).toMatchObject({ availability: 66.667, total_p50: 80, total_p95: 120 })
    expect(row).toContain('<td data-metric="availability">66.67%</td>')
    expect(row).toContain('<td data-metric="p50">80 ms</td>')
    expect(row).toContain('<td data-metric="p95">120 ms</td>')
    // the badge is in the page, as the badge route draws it
    expect(row).toMatch(/<img src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="badge of check 1"/)

    for (let i = 5; i < 150; i++) expect((await admin('POST', '/v1/checks/dns', dnsBody({ name: `check ${i}`, activated: false }))).status).toBe(201)
    const many = await callsOfAView()
    expect(many.html).toContain('150 of 150 checks')
    // a page of 100 checks more, nothing per check
    expect(many.calls.length, many.calls.join('\n')).toBeLessThanOrEqual(few.calls.length + 1)
    expect(many.calls.length).toBeLessThanOrEqual(4)
    expect(many.calls.some((l) => l.includes('/v1/analytics/') || l.includes('/v1/badges/'))).toBe(false)
  })
})

describe('roles on the dashboard', () => {
  it('a read key sees the checks without Run now or Archive, and its posts are refused', async () => {
    const check = (await caller(one, KEY_A)('POST', '/v1/checks/dns', dnsBody({ name: 'read only view', activated: false, locations: ['us-west-2'] }))).json
    const { cookie, csrf } = await logIn(front, await newKey('read'))
    const page = await (await get(`${front}/dashboard/checks/${check.id}`, cookie)).text()
    expect(page).toContain('<h1>read only view</h1>')
    expect(page).toContain('read-only key')
    expect(page).not.toContain('Run now</button>')
    const run = await post(`${front}/dashboard/checks/${check.id}/run`, { csrf }, cookie)
    expect(run.status).toBe(403)
    expect(await run.text()).toContain('This key is read-only')
    // no session was started: nothing is due in its location
    expect((await caller(one, KEY_A)('POST', '/v1/agent/claim', { agentId: 'watcher', locations: ['us-west-2'] })).json.runs).toEqual([])
  })

  it('an agent key cannot log in', async () => {
    const answer = await post(`${front}/dashboard/login`, { apiKey: await newKey('agent') })
    expect(answer.status).toBe(403)
    expect(answer.headers.get('set-cookie')).toBeNull()
    expect(await answer.text()).toContain('An agent key cannot log in')
  })
})
