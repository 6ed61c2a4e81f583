/**
 * The channel types behind one provider interface (src/server/alerts/providers): each validates
 * a channel's configuration before an attempt, so that a delivery whose stored channel its
 * provider refuses is FAILED at once, naming the field, and never sent.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore, startLocalServer, type LocalServer } from '../../src/server/index.js'
import type { NewAlertDelivery, Store } from '../../src/server/store/index.js'
import { databaseFor, onPostgres } from '../helpers/postgres-databases.js'
import { eventually, startReceiver, type Receiver } from './alerts-helpers.js'
import { caller, KEY_A, type Call } from './helpers.js'

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

const delivery = (id: string, channelType: NewAlertDelivery['channelType'], channel: Record<string, unknown>): NewAlertDelivery => ({
  notificationId: `n-${Math.random()}`,
  checkId: id,
  alertType: 'ALERT_FAILURE',
  channelType,
  channel,
  event: { id: 'e', alertType: 'ALERT_FAILURE', title: 'providers is failing' },
  status: 'PENDING',
  reason: null,
  dueAt: Date.now() - 1,
})

describe('the provider of a channel type validates the channel before an attempt', () => {
  it('a stored webhook without a name, or with a URL that is not http(s), is FAILED at the first attempt naming the field, and never sent', async () => {
    const id = await checkId()
    await store.alertDeliveries.enqueue('acc-a', [
      delivery(id, 'WEBHOOK', { url: `${hooks.url}/nameless`, method: 'POST' }),
      delivery(id, 'WEBHOOK', { name: 'ftp', url: 'ftp://127.0.0.1/hook' }),
      delivery(id, 'WEBHOOK', { name: 'fine', url: `${hooks.url}/fine` }),
    ])
    await hooks.waitFor('/fine', 1)
    const list = await eventually(async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json as any[], (l) => l.length === 3 && l.every((d) => d.status !== 'PENDING'))
    const byName = Object.fromEntries(list.map((d) => [d.channel.name ?? '(none)', d]))
    expect(byName.fine).toMatchObject({ status: 'DELIVERED', attemptCount: 1 })
    expect(byName['(none)']).toMatchObject({ status: 'FAILED', attemptCount: 1 })
    expect(byName['(none)'].attempts[0].error).toMatch(/^webhook "" \(POST http:\/\/127\.0\.0\.1:\d+\/nameless\): name is required$/)
    expect(byName.ftp).toMatchObject({ status: 'FAILED', attemptCount: 1 })
    expect(byName.ftp.attempts[0].error).toMatch(/url must be an http:\/\/ or https:\/\/ URL/)
    expect(hooks.received('/nameless')).toHaveLength(0)
  })
})
