/**
 * Email subscribers of a status page, against a real SMTP server (smtp-server on 127.0.0.1):
 * double opt-in, the updates that notify subscribers (the spec's `notifySubscribers`),
 * maintenance of the page's services, one-click unsubscribe; nothing without SMTP.
 */
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { eventually, startAlertsBench, type AlertsBench } from '../alerts/alerts-helpers.js'
import { KEY_B, caller, dnsBody, startTestServer, type Call } from '../helpers.js'

interface Mail {
  to: string[]
  raw: string
}

let smtp: SMTPServer
let dns: DnsServerHandle
let bench: AlertsBench
let server: LocalServer
let api: Call
const mails: Mail[] = []
let serviceId: string
let otherServiceId: string

/** The text of a message: its headers as sent, its body's quoted-printable soft breaks and escapes undone. */
function decoded(raw: string): string {
  const end = raw.search(/\r?\n\r?\n/)
  const body = raw
    .slice(end)
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return raw.slice(0, end) + body
}
const mailsTo = (address: string) => mails.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase())).map((m) => decoded(m.raw))
const subjectOf = (text: string) => /^Subject: (.*)$/m.exec(text)?.[1]?.trim()
const linkIn = (text: string, kind: 'subscribe/confirm' | 'unsubscribe') => new RegExp(`(http://[^\\s]+/${kind}\\?token=[\\w-]+)`).exec(text)?.[1]

/** A form post (node:http, so that a test may send another Host header). */
function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams(fields).toString()
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (response) => {
        let text = ''
        response
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => resolve({ status: response.statusCode ?? 0, text }))
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** Waits until the outbox is quiet: every queued email sent (the sender polls every 50 ms). */
async function settle(): Promise<void> {
  let last = -1
  await eventually(
    async () => {
      const now = mails.length
      const same = now === last
      last = now
      await new Promise((r) => setTimeout(r, 300))
      return same
    },
    (same) => same,
  )
}

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`
  dns = await startDnsServer()
  // the server runs checks too (a check's triggerIncident notifies subscribers)
  // subscriptions from one client address: at most 30 an hour here (20 by default)
  bench = await startAlertsBench(dns, {
    alerts: { smtpUrl, smtpFrom: 'status@monitors.test', pollMs: 50 },
    subscriberMail: { pollMs: 50, backoffMs: 100 },
    limits: { subscriptionsPerClient: { max: 30, timeWindowMs: 3_600_000 } },
  })
  server = bench.server
  api = caller(server)
  serviceId = (await api('POST', '/v1/status-pages/services', { name: 'Checkout' })).json.id
  otherServiceId = (await api('POST', '/v1/status-pages/services', { name: 'Internal' })).json.id
  const page = await api('POST', '/v1/status-pages', { name: 'Shop', url: 'shop', cards: [{ name: 'Shop', services: [{ id: serviceId }] }] })
  expect(page.status).toBe(201)
})
afterAll(async () => {
  await bench?.close()
  await dns?.close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

describe('email subscribers of a status page', () => {
  it('offers a form on the page that posts to its own address', async () => {
    const response = await fetch(`${server.url}/status/shop`)
    const html = await response.text()
    expect(html).toContain('<form class="subscribe" method="post" action="/status/shop/subscribe">')
    expect(html).toMatch(/<label for="subscribe-email">Email address<\/label> <input id="subscribe-email" name="email" type="email" required/)
    expect(response.headers.get('content-security-policy')).toContain("form-action 'self'")
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
  })

  it('confirms first: nothing but the confirmation reaches an address until its link is followed', async () => {
    const answer = await form('/status/shop/subscribe', { email: 'Alice@Example.test' })
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('an email with a confirmation link is on its way')
    const confirmation = await eventually(
      async () => mailsTo('Alice@Example.test'),
      (m) => m.length === 1,
    )
    expect(subjectOf(confirmation[0])).toBe('Confirm your subscription to Shop status')
    // the same address again at once: the same answer, no second email
    const again = await form('/status/shop/subscribe', { email: 'alice@example.test' })
    expect(again.text).toBe(answer.text.replace('Alice@Example.test', 'alice@example.test'))
    // an update that notifies subscribers, before the confirmation: not sent to Alice
    const incident = (await api('POST', '/v1/incidents', { name: 'Payments down', severity: 'MAJOR', services: [{ id: serviceId }] })).json
    expect(
      (await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'INVESTIGATING', description: 'Looking into it', notifySubscribers: true })).status,
    ).toBe(201)
    await settle()
    expect(mailsTo('Alice@Example.test')).toHaveLength(1)

    const link = linkIn(confirmation[0], 'subscribe/confirm')!
    expect(link).toMatch(new RegExp(`^${server.url}/status/shop/subscribe/confirm\\?token=`))
    const confirmed = await fetch(link)
    expect(confirmed.status).toBe(200)
    expect(await confirmed.text()).toContain('Alice@Example.test gets an email when an incident or maintenance concerns Shop')
  })

  it('sends the updates that notify subscribers, with a one-click unsubscribe', async () => {
    const incident = (await api('POST', '/v1/incidents', { name: 'Checkout slow', severity: 'MINOR', services: [{ id: serviceId }] })).json
    await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'IDENTIFIED', description: 'A slow database', notifySubscribers: true })
    // not notifying subscribers: not sent
    await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'MONITORING', description: 'Quiet fix', notifySubscribers: false })
    // a service the page does not show: not sent
    const other = (await api('POST', '/v1/incidents', { name: 'Internal tool', severity: 'MINOR', services: [{ id: otherServiceId }] })).json
    await api('POST', `/v1/incidents/${other.id}/updates`, { status: 'INVESTIGATING', description: 'Not yours', notifySubscribers: true })
    await eventually(
      async () => mailsTo('Alice@Example.test').map(subjectOf),
      (s) => s.includes('[Shop] Checkout slow: identified'),
    )
    await settle()
    const received = mailsTo('Alice@Example.test').slice(1)
    expect(received.map(subjectOf)).toEqual(['[Shop] Checkout slow: identified'])
    expect(received[0]).toContain('A slow database')
    const unsubscribe = linkIn(received[0], 'unsubscribe')!
    // the header as sent, its folding (where nodemailer wraps a long line) left out
    const headers = received[0].slice(0, received[0].search(/\r?\n\r?\n/)).replace(/\s+/g, '')
    expect(headers).toContain(`List-Unsubscribe:<${unsubscribe}>`)
    expect(received[0]).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m)
  })

  it("sends maintenance of the page's services", async () => {
    // a check of the service (its triggerIncident names it), tagged db
    expect(
      (
        await api(
          'POST',
          '/v1/checks/dns',
          dnsBody({ name: 'db', tags: ['db'], activated: false, triggerIncident: { serviceId, severity: 'MAJOR', name: 'DB down', description: 'x' } }),
        )
      ).status,
    ).toBe(201)
    await api('POST', '/v1/maintenance-windows', {
      name: 'Database upgrade',
      tags: ['db'],
      startsAt: '2030-01-01T02:00:00.000Z',
      endsAt: '2030-01-01T03:00:00.000Z',
    })
    await api('POST', '/v1/maintenance-windows', {
      name: 'Elsewhere',
      tags: ['unrelated'],
      startsAt: '2030-01-01T02:00:00.000Z',
      endsAt: '2030-01-01T03:00:00.000Z',
    })
    await eventually(
      async () => mailsTo('Alice@Example.test').map(subjectOf),
      (s) => s.includes('[Shop] Scheduled maintenance: Database upgrade'),
    )
    await settle()
    const subjects = mailsTo('Alice@Example.test').map(subjectOf)
    expect(subjects.filter((s) => s?.includes('Elsewhere'))).toEqual([])
  })

  it('sends the updates of the incident a failing check opens and resolves, when its triggerIncident notifies subscribers', async () => {
    const query = 'checkout.test'
    const id = await bench.createCheck(query, {
      name: 'Checkout resolver',
      triggerIncident: { serviceId, severity: 'CRITICAL', name: 'Checkout down', description: 'Checkout does not resolve', notifySubscribers: true },
    })
    dns.set(query, 'A', { rcode: 'SERVFAIL' })
    for (let i = 0; i < 2; i++) await bench.runOnce(id)
    await eventually(
      async () => mailsTo('Alice@Example.test').map(subjectOf),
      (s) => s.includes('[Shop] Checkout down: investigating'),
    )
    dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    expect((await bench.runOnce(id)).status).toBe('PASSED')
    const subjects = await eventually(
      async () => mailsTo('Alice@Example.test').map(subjectOf),
      (s) => s.includes('[Shop] Checkout down: resolved'),
    )
    expect(subjects.filter((s) => s?.startsWith('[Shop] Checkout down'))).toEqual(['[Shop] Checkout down: investigating', '[Shop] Checkout down: resolved'])
  })

  it("unsubscribes with a form (not on GET: mail scanners follow links), and by a mail client's one-click post", async () => {
    const unsubscribe = linkIn(mailsTo('Alice@Example.test').at(-1)!, 'unsubscribe')!
    const page = await fetch(unsubscribe)
    const html = await page.text()
    expect(html).toContain('Stop the emails of Shop to Alice@Example.test?')
    expect(html).toContain('<button type="submit">Unsubscribe</button>')
    // still subscribed after the GET
    const incident = (await api('POST', '/v1/incidents', { name: 'Still subscribed', severity: 'MINOR', services: [{ id: serviceId }] })).json
    await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'INVESTIGATING', description: 'x', notifySubscribers: true })
    await eventually(
      async () => mailsTo('Alice@Example.test').map(subjectOf),
      (s) => s.includes('[Shop] Still subscribed: investigating'),
    )
    // RFC 8058's one-click: a POST to the link with List-Unsubscribe=One-Click
    const done = await form(new URL(unsubscribe).pathname + new URL(unsubscribe).search, { 'List-Unsubscribe': 'One-Click' })
    expect(done.status).toBe(200)
    expect(done.text).toContain('No more email from Shop goes to this address')
    const count = mailsTo('Alice@Example.test').length
    await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'fixed', notifySubscribers: true })
    await settle()
    expect(mailsTo('Alice@Example.test')).toHaveLength(count)
    // the link is spent
    expect(await (await fetch(unsubscribe)).text()).toContain('This address gets no email from this status page')
  })

  it("refuses what is not an address, a page that does not exist, another page's token, and links to a host that is not the server's", async () => {
    expect((await form('/status/shop/subscribe', { email: 'not an address' })).status).toBe(400)
    expect((await form('/status/nope/subscribe', { email: 'bob@example.test' })).status).toBe(404)
    const evil = await form('/status/shop/subscribe', { email: 'victim@example.test' }, { host: 'evil.example' })
    expect(evil.status).toBe(400)
    await form('/status/shop/subscribe', { email: 'carol@example.test' })
    const confirmation = await eventually(
      async () => mailsTo('carol@example.test'),
      (m) => m.length === 1,
    )
    const token = new URL(linkIn(confirmation[0], 'subscribe/confirm')!).searchParams.get('token')!
    expect((await api('POST', '/v1/status-pages', { name: 'Other', url: 'other', cards: [] })).status).toBe(201)
    expect((await fetch(`${server.url}/status/other/subscribe/confirm?token=${token}`)).status).toBe(404)
    await settle()
    expect(mailsTo('victim@example.test')).toEqual([])
  })
})

describe('what the subscription forms may send', () => {
  it('at most 5 confirmations an hour to one address, whatever the page or the account: the sixth page answers the same and sends nothing', async () => {
    const b = caller(server, KEY_B)
    const urls: string[] = []
    for (const [who, n] of [
      [api, 1],
      [api, 2],
      [api, 3],
      [b, 1],
      [b, 2],
      [b, 3],
    ] as const) {
      const url = `${who === api ? 'a' : 'b'}-flood-${n}`
      expect((await who('POST', '/v1/status-pages', { name: `Flood ${url}`, url, cards: [] })).status).toBe(201)
      urls.push(url)
    }
    const answers = []
    for (const url of urls) answers.push(await form(`/status/${url}/subscribe`, { email: 'Victim@Flood.test' }))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200])
    // the form tells nobody: the sixth answer is the others' (its page's name and address aside)
    expect(answers[5].text).toBe(answers[4].text.replaceAll('b-flood-2', 'b-flood-3'))
    await eventually(
      async () => mailsTo('victim@flood.test'),
      (m) => m.length === 5,
    )
    await settle()
    expect(mailsTo('victim@flood.test')).toHaveLength(5)
    // another address is not held to the first one's count
    await form(`/status/${urls[5]}/subscribe`, { email: 'someone-else@flood.test' })
    await eventually(
      async () => mailsTo('someone-else@flood.test'),
      (m) => m.length === 1,
    )
  })

  it('subscriptions from one client address are bounded: past it a 429 saying when to try again, and nothing sent', async () => {
    let refused: { status: number; text: string } | undefined
    let accepted = 0
    for (let i = 0; i < 40 && !refused; i++) {
      const answer = await form('/status/shop/subscribe', { email: `client-${i}@flood.test` })
      if (answer.status === 429) refused = answer
      else {
        expect(answer.status).toBe(200)
        accepted++
      }
    }
    expect(refused?.text).toMatch(/Too many subscriptions from your address: try again in (60|59) minutes\./)
    await settle()
    expect(mails.filter((m) => m.to.some((to) => to.startsWith('client-'))).length).toBe(accepted)
    expect(mailsTo(`client-${accepted}@flood.test`)).toEqual([])
  })
})

describe('without an SMTP server', () => {
  it('offers no subscription', async () => {
    const plain = await startTestServer()
    try {
      const a = caller(plain)
      expect((await a('POST', '/v1/status-pages', { name: 'Plain', url: 'plain', cards: [] })).status).toBe(201)
      const html = await (await fetch(`${plain.url}/status/plain`)).text()
      expect(html).toContain('<h1')
      expect(html).not.toContain('subscribe')
      const response = await fetch(`${plain.url}/status/plain/subscribe`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a%40example.test',
      })
      expect(response.status).toBe(404)
    } finally {
      await plain.close()
    }
  })
})
