/**
 * Alert deliveries with several processes on one database: a notification recorded by another
 * process (here a second store on the database, as an agent's server or a second server would hold)
 * is sent by the server's worker, and two servers sending from one outbox send each delivery once.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../../src/server/index.js'
import { recordResult } from '../../../src/server/results/index.js'
import { runCheck } from '../../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { eventually, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from './alerts-helpers.js'

let dir: string
let dns: DnsServerHandle
let hooks: Receiver
let first: AlertsBench
let second: AlertsBench

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-alerts-shared-'))
  dns = await startDnsServer()
  hooks = await startReceiver()
  const options = { dbPath: join(dir, 'shared.db'), alerts: { pollMs: 20 } }
  first = await startAlertsBench(dns, options)
  second = await startAlertsBench(dns, options)
})
afterAll(async () => {
  await first?.close()
  await second?.close()
  await hooks?.close()
  await dns?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('one outbox, several processes', () => {
  it("a notification recorded by another process is delivered by a server's worker", async () => {
    dns.set('elsewhere.test', 'A', { rcode: 'SERVFAIL' })
    const id = await first.createCheck('elsewhere.test', { alertChannels: { webhook: [{ name: 'w', url: `${hooks.url}/elsewhere` }] } })
    const check = (await first.call('GET', `/v1/checks/${id}`)).json
    const store = await openStore(join(dir, 'shared.db'))
    try {
      const result = await runCheck(check, { location: 'eu-west-1', retries: false })
      const outcome = await recordResult(store, check, { ...result, id: randomUUID() })
      expect(outcome.notifications).toEqual(['ALERT_FAILURE'])
    } finally {
      await store.close()
    }
    const [request] = await hooks.waitFor('/elsewhere', 1)
    expect(request.json).toMatchObject({ alertType: 'ALERT_FAILURE', checkId: id, runLocation: 'eu-west-1' })
  })

  it('two servers on one database send each delivery once', async () => {
    const ids: string[] = []
    for (let n = 0; n < 6; n++) {
      const query = `twice-${n}.test`
      dns.set(query, 'A', { rcode: 'SERVFAIL' })
      const id = await first.createCheck(query, { alertChannels: { webhook: [{ name: 'w', url: `${hooks.url}/once` }] } })
      ids.push(id)
      // runs by either server's runner; both workers poll every 20 ms
      await (n % 2 === 0 ? first : second).runOnce(id)
    }
    for (const id of ids) {
      await eventually(
        () => first.deliveries(id),
        (list) => list.length === 1 && list[0].status === 'DELIVERED',
      )
    }
    // every delivery arrived, each once
    await new Promise((resolve) => setTimeout(resolve, 200))
    const seen = hooks.received('/once').map((r) => r.json.checkId)
    expect(seen.sort()).toEqual([...ids].sort())
  })
})
