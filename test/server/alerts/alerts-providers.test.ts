/**
 * The channel types behind one provider interface (src/server/alerts/providers): each validates
 * a channel's configuration before an attempt, so that a delivery whose stored channel its
 * provider refuses is FAILED at once, naming the field, and never sent.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore, startLocalServer, type LocalServer } from '../../../src/server/index.js'
import type { NewAlertDelivery, Store } from '../../../src/server/store/index.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { eventually, startReceiver, type Receiver } from './alerts-helpers.js'
import { caller, KEY_A, type Call } from '../helpers.js'

let dir: string
let server: LocalServer
let store: Store
let call: Call
let hooks: Receiver

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-providers-'))
  const dbPath = onPostgres ? (await databaseFor(join(dir, 'monitors.db'))).url : join(dir, 'monitors.db')
  server = await startLocalServer({
    host: '127.0.0.1',
    port: 0,
    dbPath,
    apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    privateTargets: 'allow',
    alerts: { pollMs: 50, backoffMs: 50 },
  })
  store = await openStore(dbPath)
  call = caller(server)
  hooks = await startReceiver()
})
afterAll(async () => {
  await hooks?.close()
  await store?.close()
  await server?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function checkId(): Promise<string> {
  const answer = await call('POST', '/v1/checks/dns', { name: 'providers', activated: false, request: { query: 'providers.test' } })
  expect(answer.status, answer.text).toBe(201)
  return answer.json.id
}

type Kind = NewAlertDelivery['alertType']

/** The event the results write (src/server/alerts/event.ts) for a failing DNS check. */
const eventOf = (checkId: string, alertType: Kind, title: string) => ({
  id: `e-${Math.random()}`,
  alertType,
  title,
  checkId,
  checkName: 'providers',
  checkType: 'DNS',
  tags: ['team:ops'],
  checkResultId: 'r-1',
  runLocation: 'eu-west-1',
  responseTime: 12,
  statusCode: null,
  hasFailures: alertType !== 'ALERT_RECOVERY',
  hasErrors: false,
  isDegraded: alertType === 'ALERT_DEGRADED',
  errorMessage: alertType === 'ALERT_RECOVERY' ? null : 'no answer from the name server',
  sslDaysRemaining: null,
  startedAt: '2026-11-26T10:00:00.000Z',
  stoppedAt: '2026-11-26T10:00:01.000Z',
  notifiedAt: '2026-11-26T10:00:02.000Z',
  incidentId: null,
})

const delivery = (
  id: string,
  channelType: NewAlertDelivery['channelType'],
  channel: Record<string, unknown>,
  alertType: Kind = 'ALERT_FAILURE',
): NewAlertDelivery => ({
  notificationId: `n-${Math.random()}`,
  checkId: id,
  alertType,
  channelType,
  channel,
  event:
    channelType === 'WEBHOOK'
      ? { id: 'e', alertType: 'ALERT_FAILURE', title: 'providers is failing' }
      : eventOf(id, alertType, alertType === 'ALERT_RECOVERY' ? 'providers has recovered' : 'providers is failing'),
  status: 'PENDING',
  reason: null,
  dueAt: Date.now() - 1,
})

async function settled(id: string, count: number): Promise<any[]> {
  return eventually(
    async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json as any[],
    (l) => l.length === count && l.every((d) => d.status !== 'PENDING'),
  )
}

describe('the provider of a channel type validates the channel before an attempt', () => {
  it('a stored webhook without a name, or with a URL that is not http(s), is FAILED at the first attempt naming the field, and never sent', async () => {
    const id = await checkId()
    await store.alertDeliveries.enqueue('acc-a', [
      delivery(id, 'WEBHOOK', { url: `${hooks.url}/nameless`, method: 'POST' }),
      delivery(id, 'WEBHOOK', { name: 'ftp', url: 'ftp://127.0.0.1/hook' }),
      delivery(id, 'WEBHOOK', { name: 'fine', url: `${hooks.url}/fine` }),
    ])
    await hooks.waitFor('/fine', 1)
    const list = await eventually(
      async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json as any[],
      (l) => l.length === 3 && l.every((d) => d.status !== 'PENDING'),
    )
    const byName = Object.fromEntries(list.map((d) => [d.channel.name ?? '(none)', d]))
    expect(byName.fine).toMatchObject({ status: 'DELIVERED', attemptCount: 1 })
    expect(byName['(none)']).toMatchObject({ status: 'FAILED', attemptCount: 1 })
    expect(byName['(none)'].attempts[0].error).toMatch(/^webhook "" \(POST http:\/\/127\.0\.0\.1:\d+\/nameless\): name is required$/)
    expect(byName.ftp).toMatchObject({ status: 'FAILED', attemptCount: 1 })
    expect(byName.ftp.attempts[0].error).toMatch(/url must be an http:\/\/ or https:\/\/ URL/)
    expect(hooks.received('/nameless')).toHaveLength(0)
  })
})

describe('PagerDuty, Opsgenie and Microsoft Teams, each one provider file, against a local receiver', () => {
  it("PagerDuty (Events API v2): a failure triggers with severity critical and the check's dedup key, a recovery resolves it; the routing key is never shown", async () => {
    const id = await checkId()
    hooks.answer('/pd', 202)
    const channel = { serviceKey: 'R0UTING-KEY-SECRET', serviceName: 'shop', url: `${hooks.url}/pd` }
    await store.alertDeliveries.enqueue('acc-a', [delivery(id, 'PAGERDUTY', channel)])
    const [trigger] = await hooks.waitFor('/pd', 1)
    await store.alertDeliveries.enqueue('acc-a', [delivery(id, 'PAGERDUTY', channel, 'ALERT_RECOVERY')])
    const [, resolve] = await hooks.waitFor('/pd', 2)
    expect(trigger.method).toBe('POST')
    expect(trigger.headers['content-type']).toBe('application/json')
    expect(trigger.json).toMatchObject({
      routing_key: 'R0UTING-KEY-SECRET',
      event_action: 'trigger',
      dedup_key: `monitors-check-${id}`,
      payload: {
        summary: 'providers is failing: no answer from the name server',
        source: 'eu-west-1',
        severity: 'critical',
        timestamp: '2026-11-26T10:00:01.000Z',
        component: 'providers',
      },
    })
    expect(resolve.json).toEqual({ routing_key: 'R0UTING-KEY-SECRET', event_action: 'resolve', dedup_key: `monitors-check-${id}` })
    const list = await settled(id, 2)
    for (const d of list) {
      expect(d).toMatchObject({ channelType: 'PAGERDUTY', status: 'DELIVERED', attempts: [{ statusCode: 202, outcome: 'DELIVERED' }] })
      expect(d.channel).toEqual({ account: null, serviceName: 'shop', url: `${hooks.url}/pd` })
    }
    expect(JSON.stringify(list)).not.toContain('R0UTING-KEY-SECRET')
  })

  it('Opsgenie (Alert API): a failure creates an alert with the GenieKey, alias and priority, a recovery closes it by alias; the key is never shown', async () => {
    const id = await checkId()
    hooks.answer('/og/v2/alerts', 202)
    const channel = { name: 'on call', apiKey: 'GENIE-SECRET', region: 'EU', priority: 'P1', url: `${hooks.url}/og` }
    await store.alertDeliveries.enqueue('acc-a', [delivery(id, 'OPSGENIE', channel)])
    const [created] = await hooks.waitFor('/og/v2/alerts', 1)
    const closePath = `/og/v2/alerts/monitors-check-${id}/close`
    await store.alertDeliveries.enqueue('acc-a', [delivery(id, 'OPSGENIE', channel, 'ALERT_RECOVERY')])
    const [closed] = await hooks.waitFor(closePath, 1)
    expect(created.headers.authorization).toBe('GenieKey GENIE-SECRET')
    expect(created.json).toMatchObject({
      message: 'providers is failing',
      alias: `monitors-check-${id}`,
      priority: 'P1',
      source: 'monitors',
      entity: 'providers',
      tags: ['team:ops'],
    })
    expect(created.json.description).toContain('no answer from the name server')
    expect(closed.url).toBe(`${closePath}?identifierType=alias`)
    expect(closed.headers.authorization).toBe('GenieKey GENIE-SECRET')
    expect(closed.json).toMatchObject({ source: 'monitors' })
    const list = await settled(id, 2)
    expect(list.map((d) => d.status)).toEqual(['DELIVERED', 'DELIVERED'])
    expect(list[0].channel).toEqual({ name: 'on call', region: 'EU', priority: 'P1', url: `${hooks.url}/og` })
    expect(JSON.stringify(list)).not.toContain('GENIE-SECRET')
  })

  it("Microsoft Teams: a message with one Adaptive Card (title and facts); the URL's path, its token, is never shown", async () => {
    const id = await checkId()
    await store.alertDeliveries.enqueue('acc-a', [delivery(id, 'MSTEAMS', { name: 'ops room', url: `${hooks.url}/teams/TOKEN-SECRET` })])
    const [message] = await hooks.waitFor('/teams/TOKEN-SECRET', 1)
    expect(message.json.type).toBe('message')
    expect(message.json.attachments).toHaveLength(1)
    const [card] = message.json.attachments
    expect(card.contentType).toBe('application/vnd.microsoft.card.adaptive')
    expect(card.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' })
    expect(card.content.body[0]).toMatchObject({ type: 'TextBlock', text: 'providers is failing', color: 'Attention' })
    expect(card.content.body[1].type).toBe('FactSet')
    expect(card.content.body[1].facts).toContainEqual({ title: 'Location', value: 'eu-west-1' })
    expect(card.content.body[1].facts).toContainEqual({ title: 'Error', value: 'no answer from the name server' })
    const [d] = await settled(id, 1)
    expect(d).toMatchObject({ status: 'DELIVERED', channel: { name: 'ops room', url: `${hooks.url}/…` } })
    expect(JSON.stringify(d)).not.toContain('TOKEN-SECRET')
  })

  it('a 400 of PagerDuty (a bad routing key) is final; a 429 of Opsgenie is retried', async () => {
    const id = await checkId()
    hooks.answer('/pd-bad', 400)
    hooks.answer('/og-busy/v2/alerts', 429, 202)
    await store.alertDeliveries.enqueue('acc-a', [
      delivery(id, 'PAGERDUTY', { serviceKey: 'wrong', url: `${hooks.url}/pd-bad` }),
      delivery(id, 'OPSGENIE', { name: 'busy', apiKey: 'k', url: `${hooks.url}/og-busy` }),
    ])
    const list = await settled(id, 2)
    const byType = Object.fromEntries(list.map((d) => [d.channelType, d]))
    expect(byType.PAGERDUTY).toMatchObject({ status: 'FAILED', attemptCount: 1, attempts: [{ statusCode: 400, outcome: 'FAILED' }] })
    expect(byType.OPSGENIE).toMatchObject({ status: 'DELIVERED', attemptCount: 2 })
    expect(byType.OPSGENIE.attempts.map((a: any) => a.statusCode)).toEqual([429, 202])
  })

  it('a channel its provider refuses (PagerDuty without a serviceKey, Opsgenie with an unknown priority) is FAILED naming the field', async () => {
    const id = await checkId()
    await store.alertDeliveries.enqueue('acc-a', [
      delivery(id, 'PAGERDUTY', { url: `${hooks.url}/pd-nokey` }),
      delivery(id, 'OPSGENIE', { name: 'odd', apiKey: 'k', priority: 'P9', url: `${hooks.url}/og-odd` }),
    ])
    const list = await settled(id, 2)
    const byType = Object.fromEntries(list.map((d) => [d.channelType, d]))
    expect(byType.PAGERDUTY.status).toBe('FAILED')
    expect(byType.PAGERDUTY.attempts[0].error).toMatch(/serviceKey/)
    expect(byType.OPSGENIE.attempts[0].error).toMatch(/priority/)
    expect(hooks.received('/pd-nokey')).toHaveLength(0)
    expect(hooks.received('/og-odd/v2/alerts')).toHaveLength(0)
  })
})

describe('the new providers go through the private-target policy', () => {
  let denying: LocalServer
  let denyingStore: Store
  let denyDir: string
  beforeAll(async () => {
    denyDir = mkdtempSync(join(tmpdir(), 'monitors-providers-deny-'))
    const dbPath = onPostgres ? (await databaseFor(join(denyDir, 'monitors.db'))).url : join(denyDir, 'monitors.db')
    denying = await startLocalServer({
      host: '127.0.0.1',
      port: 0,
      dbPath,
      apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
      rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
      privateTargets: 'deny',
      alerts: { pollMs: 50, backoffMs: 50 },
    })
    denyingStore = await openStore(dbPath)
  })
  afterAll(async () => {
    await denyingStore?.close()
    await denying?.close()
    if (denyDir) rmSync(denyDir, { recursive: true, force: true })
  })

  it('deny: PagerDuty, Opsgenie and Teams at 127.0.0.1 are refused on the first attempt and never reached', async () => {
    const denyCall = caller(denying)
    const created = await denyCall('POST', '/v1/checks/dns', { name: 'deny', activated: false, request: { query: 'deny.test' } })
    expect(created.status, created.text).toBe(201)
    const id = created.json.id
    await denyingStore.alertDeliveries.enqueue('acc-a', [
      delivery(id, 'PAGERDUTY', { serviceKey: 'k', url: `${hooks.url}/deny-pd` }),
      delivery(id, 'OPSGENIE', { name: 'o', apiKey: 'k', url: `${hooks.url}/deny-og` }),
      delivery(id, 'MSTEAMS', { name: 't', url: `${hooks.url}/deny-teams` }),
    ])
    const list = await eventually(
      async () => (await denyCall('GET', `/v1/alert-deliveries?checkId=${id}`)).json as any[],
      (l) => l.length === 3 && l.every((d) => d.status !== 'PENDING'),
    )
    for (const d of list) {
      expect(d).toMatchObject({ status: 'FAILED', attemptCount: 1 })
      expect(d.attempts[0].error).toMatch(/127\.0\.0\.1 is a loopback address .*refused by the private-target policy/)
    }
    expect(hooks.received('/deny-pd')).toHaveLength(0)
    expect(hooks.received('/deny-og/v2/alerts')).toHaveLength(0)
    expect(hooks.received('/deny-teams')).toHaveLength(0)
  })
})
