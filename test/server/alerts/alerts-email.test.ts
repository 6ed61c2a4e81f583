/**
 * Alert email through SMTP: the server is given the URL of a real SMTP server (smtp-server,
 * listening on 127.0.0.1 in this test) and sends each notification's email with nodemailer.
 * A permanent refusal (5xx) is final, a temporary one (4xx) is retried.
 */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { eventually, startAlertsBench, type AlertsBench } from './alerts-helpers.js'

interface Mail {
  from: string
  to: string[]
  raw: string
}

let dns: DnsServerHandle
let smtp: SMTPServer
let smtpPort: number
let bench: AlertsBench
const mails: Mail[] = []
const refusedOnce = new Set<string>()

beforeAll(async () => {
  dns = await startDnsServer()
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address === 'nobody@example.test') return callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }))
      if (address.address === 'busy@example.test' && !refusedOnce.has(address.address)) {
        refusedOnce.add(address.address)
        return callback(Object.assign(new Error('Try again later'), { responseCode: 451 }))
      }
      callback()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  smtpPort = (smtp.server.address() as AddressInfo).port
  bench = await startAlertsBench(dns, {
    alerts: { smtpUrl: `smtp://127.0.0.1:${smtpPort}`, smtpFrom: 'alerts@monitors.test', pollMs: 50, backoffMs: 200, timeoutMs: 5000 },
  })
})
afterAll(async () => {
  await bench?.close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
  await dns?.close()
})

/** The text of a message: headers as sent, quoted-printable soft breaks and escapes undone. */
function decoded(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

async function failing(query: string, address: string, name: string): Promise<{ id: string; resultId: string }> {
  dns.set(query, 'A', { rcode: 'SERVFAIL' })
  const id = await bench.createCheck(query, { name, alertChannels: { email: [{ address }] } })
  const run = await bench.runOnce(id)
  expect(run.status).toBe('FAILED')
  return { id, resultId: run.results[0].checkResultId }
}

describe('email alerts', () => {
  it("sends the alert to the channel's address from --smtp-from, and records the SMTP answer", async () => {
    const { id, resultId } = await failing('mail.test', 'ops@example.test', 'Mail resolver')
    const mail = await eventually(
      async () => mails.find((m) => m.to.includes('ops@example.test')),
      (m) => m !== undefined,
    )
    expect(mail!.from).toBe('alerts@monitors.test')
    const text = decoded(mail!.raw)
    expect(text).toMatch(/^Subject: \[monitors\] Mail resolver is failing\r?$/m)
    expect(text).toMatch(/^To: ops@example\.test\r?$/m)
    expect(text).toContain('Mail resolver is failing.')
    expect(text).toContain('SERVFAIL')
    expect(text).toContain(resultId)
    expect(text).toContain('ALERT_FAILURE')

    const [delivery] = await eventually(
      () => bench.deliveries(id),
      (list) => list[0]?.status === 'DELIVERED',
    )
    expect(delivery).toMatchObject({ channelType: 'EMAIL', channel: { address: 'ops@example.test' }, attemptCount: 1 })
    expect(delivery.attempts[0]).toMatchObject({ attempt: 1, statusCode: 250, outcome: 'DELIVERED', error: null })
    expect(text.toLowerCase()).toContain(`x-monitors-delivery-id: ${delivery.id}`)

    // the recovery too
    dns.set('mail.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    await bench.runOnce(id)
    const recovery = await eventually(
      async () => mails.filter((m) => m.to.includes('ops@example.test')),
      (list) => list.length === 2,
    )
    expect(decoded(recovery[1].raw)).toMatch(/^Subject: \[monitors\] Mail resolver has recovered\r?$/m)
  })

  it('a mailbox the server refuses for good (550) fails at once; a 451 is retried', async () => {
    const refused = await failing('nobody.test', 'nobody@example.test', 'Nobody')
    const [final] = await eventually(
      () => bench.deliveries(refused.id),
      (list) => list[0]?.status === 'FAILED',
    )
    expect(final.attempts).toHaveLength(1)
    expect(final.attempts[0]).toMatchObject({ statusCode: 550, outcome: 'FAILED' })
    expect(final.attempts[0].error).toMatch(/No such mailbox/)

    const busy = await failing('busy.test', 'busy@example.test', 'Busy')
    const [retried] = await eventually(
      () => bench.deliveries(busy.id),
      (list) => list[0]?.status === 'DELIVERED',
    )
    expect(retried.attempts.map((a: any) => [a.statusCode, a.outcome])).toEqual([
      [451, 'RETRY'],
      [250, 'DELIVERED'],
    ])
    expect(mails.filter((m) => m.to.includes('busy@example.test'))).toHaveLength(1)
  })
})
