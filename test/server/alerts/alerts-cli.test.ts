/**
 * `monitors server --smtp-url` (built CLI): a bad URL is one clear line; MONITORING_SMTP_URL and
 * --smtp-from reach the delivery worker, and a failing check's alert arrives at a real SMTP server.
 */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { describe, expect, it } from 'vitest'
import { startDnsServer } from '../../helpers/dns-server.js'
import { caller } from '../helpers.js'
import { eventually } from './alerts-helpers.js'
import { serverBuilt, startServerProcess } from '../../helpers/server-process.js'

const startCli = (args: string[], env: Record<string, string> = {}) => startServerProcess(['--db', ':memory:', ...args], { env })

describe.skipIf(!serverBuilt)('monitors server --smtp-url', () => {
  it('refuses a URL that is not smtp:// or smtps:// with one line and exit code 1', async () => {
    const bad = startCli(['--smtp-url', 'ftp://user:hunter2@mail.example.test'])
    await expect(bad.ready).rejects.toThrow(/The SMTP URL must start with smtp:\/\/ or smtps:\/\/, got ftp:\/\/mail\.example\.test/)
    expect(await bad.exited).toBe(1)
    expect(bad.output()).not.toMatch(/\n\s+at /)
    expect(bad.output()).not.toContain('hunter2')
  })

  it("takes MONITORING_SMTP_URL and --smtp-from: a failing check's alert arrives by email", async () => {
    const mails: Array<{ from: string; to: string[]; raw: string; user?: string }> = []
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        callback(null, { user: auth.username })
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = []
        stream.on('data', (c: Buffer) => chunks.push(c))
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            user: session.user as string | undefined,
          })
          callback()
        })
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
    const port = (smtp.server.address() as AddressInfo).port
    const dns = await startDnsServer()
    dns.set('cli-mail.test', 'A', { rcode: 'SERVFAIL' })
    const server = startCli(['--api-key', 'smtp-key-0123456789:ops', '--quiet', '--smtp-from', 'pager@monitors.test'], {
      MONITORING_SMTP_URL: `smtp://alerts:s3cret@127.0.0.1:${port}`,
    })
    try {
      const url = await server.ready
      expect(server.output()).toContain(`Alert email through smtp://127.0.0.1:${port} from pager@monitors.test`)
      expect(server.output()).not.toContain('s3cret')
      const api = caller({ url }, 'smtp-key-0123456789')
      const check = await api('POST', '/v1/checks/dns', {
        name: 'CLI mail',
        activated: false,
        doubleCheck: false,
        request: { query: 'cli-mail.test', nameServer: '127.0.0.1', port: dns.port },
        alertChannels: { email: [{ address: 'oncall@example.test' }] },
      })
      expect(check.status).toBe(201)
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.json.status).toBe('FAILED')
      await eventually(
        async () => mails.length,
        (n) => n === 1,
      )
      expect(mails[0]).toMatchObject({ from: 'pager@monitors.test', to: ['oncall@example.test'], user: 'alerts' })
      expect(mails[0].raw).toMatch(/^Subject: \[monitors\] CLI mail is failing\r?$/m)
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    } finally {
      server.child.kill('SIGKILL')
      await dns.close()
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })
})
