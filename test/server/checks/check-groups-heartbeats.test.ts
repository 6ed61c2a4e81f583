/**
 * Heartbeat checks in a check group get the group's alert settings, as the checks the server
 * runs do: a missed period alerts the group's channels, a muted group holds its heartbeats'
 * alerts back, a deactivated group's heartbeats record no pings. The real server with a clock
 * the test moves by hand and a fast scheduler tick (the sweep that records missed periods);
 * alerts are read as the notifications and deliveries recorded with the result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, startTestServer, type Call } from '../helpers.js'

const T0 = Date.parse('2026-03-01T10:00:00Z')
const S = 1000
let now = T0
let server: LocalServer
let call: Call

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error('timed out')
    await sleep(20)
  }
}

async function created(path: string, body: unknown): Promise<any> {
  const answer = await call('POST', path, body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

const channel = async (name: string) => (await created('/v1/alert-channels', { type: 'WEBHOOK', config: { name, url: `http://127.0.0.1:9/${name}` } })).id
const heartbeat = (name: string, extra: Record<string, unknown>) =>
  created('/v1/checks/heartbeat', { name, heartbeat: { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' }, ...extra })

/** The check's results (FINAL), newest first. */
const results = async (checkId: string) => (await call('GET', `/v1/check-results/${checkId}`)).json as Array<{ hasFailures: boolean }>
/** The channels the check's recorded alerts go to. */
const channels = async (checkId: string) =>
  ((await call('GET', `/v1/alert-deliveries?checkId=${checkId}&limit=100`)).json as Array<{ channel: { alertChannelId: number } }>)
    .map((d) => d.channel.alertChannelId)
    .sort()

beforeAll(async () => {
  server = await startTestServer({ clock: () => now, scheduler: true, privateTargets: 'allow', schedulerOptions: { tickMs: 20 } })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
})

describe('heartbeat checks in a check group', () => {
  it("a missed period alerts the group's channels; a muted group's heartbeat alerts no one; a deactivated group's records no ping", async () => {
    const groupChannel = await channel('group-hook')
    const ownChannel = await channel('own-hook')
    const subscribe = (id: number) => [{ alertChannelId: id, activated: true }]
    const alerting = await created('/v1/check-groups', { name: 'Nightly jobs', alertChannelSubscriptions: subscribe(groupChannel) })
    const muted = await created('/v1/check-groups', { name: 'Muted jobs', muted: true })
    const off = await created('/v1/check-groups', { name: 'Paused jobs', activated: false })

    const inGroup = await heartbeat('Backup', { groupId: alerting.id })
    const inMuted = await heartbeat('Export', { groupId: muted.id, alertChannelSubscriptions: subscribe(ownChannel) })
    const inOff = await heartbeat('Report', { groupId: off.id })

    // a ping of the paused group's heartbeat: an event, no result (as for a paused check)
    expect((await fetch(inOff.heartbeat.pingUrl, { method: 'POST' })).status).toBe(200)
    expect(await results(inOff.id)).toEqual([])

    // past period and grace: both miss their period
    now = T0 + 10 * 60 * S
    for (const id of [inGroup.id, inMuted.id]) await until(async () => ((await results(id)).some((r) => r.hasFailures) ? true : undefined))

    expect(await channels(inGroup.id)).toEqual([groupChannel])
    expect(await channels(inMuted.id)).toEqual([])
    // the muted one's failure is recorded as usual
    expect((await call('GET', `/v1/check-statuses/${inMuted.id}`)).json).toMatchObject({ hasFailures: true })
    expect(await results(inOff.id)).toEqual([])
  }, 60_000)
})
