/**
 * Certificates from the CLI: the config's `defaults.alertSettings.sslCertificates` applies to a
 * UrlCheck; `monitors status` shows the certificate's days and whether they are within the
 * threshold; `monitors test` (its own process, trusting the test's certificate) fails a
 * certificate made for another name and an expired one, naming why.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { startTlsServer, type TlsServerHandle } from '../helpers/http-server.js'
import { makeProject, monitors, monitorsProcess, STACK_LINE } from '../helpers/cli.js'

const KEY = 'certificates-cli-key-0123456789abcdef'
let server: LocalServer
let fiveDays: TlsServerHandle
let wrongName: TlsServerHandle
let expired: TlsServerHandle

beforeAll(async () => {
  fiveDays = await startTlsServer({ validDays: 5, extraHours: 3 })
  wrongName = await startTlsServer({ validDays: 90, names: ['shop.example.com'] })
  expired = await startTlsServer({ validDays: -2, extraHours: -3 })
  for (const s of [fiveDays, wrongName, expired]) s.route('/', { status: 200, body: 'ok' })
  server = await startLocalServer({
    port: 0,
    dbPath: ':memory:',
    apiKeys: [{ key: KEY, accountId: 'certs' }],
    runner: true,
    privateTargets: 'allow',
    schedulerOptions: { tickMs: 50 },
  })
})
afterAll(async () => {
  await server?.close()
  for (const s of [fiveDays, wrongName, expired]) await s?.close()
})

describe('certificates from the CLI', () => {
  it('a config default threshold applies to a UrlCheck; monitors status shows the days within it', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY }
    const dir = makeProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'certs', defaults: { alertSettings: { sslCertificates: { alertThreshold: 14 } } } })\n`,
      'tls.check.ts': `import { UrlCheck } from 'monitors-as-code'\nnew UrlCheck('shop-tls', { name: 'Shop TLS', activated: false, request: { url: '${fiveDays.origin}/', skipSSL: true } })\n`,
    })
    const applied = await monitors(dir, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const id = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')).resources['url-check:shop-tls'].remoteId as string
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
    const check = (await (await fetch(`${server.url}/v1/checks/${id}`, { headers })).json()) as Record<string, any>
    expect(check.alertSettings.sslCertificates).toEqual({ enabled: true, alertThreshold: 14 })
    const trigger = (await (
      await fetch(`${server.url}/v1/check-sessions/trigger`, { method: 'POST', headers, body: JSON.stringify({ target: { checkId: [id] } }) })
    ).json()) as Record<string, any>
    const done = (await (
      await fetch(`${server.url}/v1/check-sessions/${trigger.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`, { headers })
    ).json()) as Record<string, any>
    expect(done.status).toBe('PASSED')
    const status = await monitors(dir, ['status'], env)
    expect(status.code, status.output).toBe(0)
    expect(status.stdout).toContain('Certificates (newest run):')
    expect(status.stdout).toContain('url-check:shop-tls "Shop TLS"  certificate 5 days left (ALERT: alert at 14 days or fewer)')
    const json = JSON.parse((await monitors(dir, ['status', '--format', 'json'], env)).stdout)
    expect(json.checks[0]).toMatchObject({ logicalId: 'shop-tls', sslDaysRemaining: 5, sslAlertThreshold: 14 })
  })

  it('monitors test fails a certificate for another name and an expired one, each naming why', async () => {
    const dir = makeProject({
      'tls.check.ts': `import { UrlCheck } from 'monitors-as-code'
new UrlCheck('wrong-name', { name: 'Wrong name', request: { url: '${wrongName.origin}/' } })
new UrlCheck('expired', { name: 'Expired', request: { url: '${expired.origin}/' } })
`,
    })
    // the test's certificates are trusted, so what fails is the name and the date, not the issuer
    const ca = join(dir, 'test-ca.pem')
    writeFileSync(ca, `${wrongName.cert}\n${expired.cert}\n`)
    const result = await monitorsProcess(dir, ['test', '--format', 'json'], { NODE_EXTRA_CA_CERTS: ca })
    expect(result.code, result.output).toBe(1)
    expect(result.output).not.toMatch(STACK_LINE)
    const byId = Object.fromEntries((JSON.parse(result.stdout).results as Array<Record<string, any>>).map((r) => [r.logicalId, r]))
    expect(byId['wrong-name'].status).toBe('FAILED')
    expect(byId['wrong-name'].error).toContain('certificate does not match the host name')
    expect(byId.expired.status).toBe('FAILED')
    expect(byId.expired.error).toContain('certificate has expired')
  })
})
