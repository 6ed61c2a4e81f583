import { request as httpRequest } from 'node:http'
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScript, type ScriptCheck, type ScriptRunOptions } from '../../../src/runner/script/index.js'
import { startEgress } from '../../../src/runner/script/egress.js'
import { containment } from '../../../src/runner/script/jail.js'
import { hasChromium } from '../../helpers/browser.js'
import { startHttpServer, startTlsServer, type HttpServerHandle, type TlsServerHandle } from '../../helpers/http-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'

/*
 * The private-target policy `deny` for browser and multi-step checks: the script's own
 * connections are checked in its process, the browser's go out through the egress proxy. The
 * targets are on 127.0.0.1, a loopback address: refused unless an exception names them.
 */

let cache: string
let work: string
let site: HttpServerHandle
let tls: TlsServerHandle

beforeAll(async () => {
  cache = await prepareTestRuntime()
  work = mkdtempSync(join(tmpdir(), 'monitors-private-targets-'))
  site = await startHttpServer()
  site.route('/', { headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>inside</title><p id="p">internal page</p>' })
  site.route('/multi', { body: { ok: true } })
  tls = await startTlsServer({ validDays: 30 })
  tls.route('/', { headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>tls</title><p id="p">over tls</p>' })
}, 180_000)

afterAll(async () => {
  await site?.close()
  await tls?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const sitePaths = () => site.requests.map((r) => r.path)

/** A request through the proxy: absolute form for http:, CONNECT (then TLS) for https:. */
function throughProxy(proxy: string, target: string): Promise<{ status: number; body: string }> {
  const via = new URL(proxy)
  const url = new URL(target)
  if (url.protocol === 'http:') {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: via.hostname, port: via.port, path: target, headers: { host: url.host } }, (res) => {
        let body = ''
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on('error', reject)
      req.end()
    })
  }
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(via.port), via.hostname, () => socket.write(`CONNECT ${url.host} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`))
    socket.once('data', (chunk) => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString())?.[1])
      if (status !== 200) {
        socket.destroy()
        return resolve({ status, body: '' })
      }
      const secure = tlsConnect({ socket, servername: 'localhost', rejectUnauthorized: false }, () => {
        secure.write(`GET / HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`)
      })
      let body = ''
      secure.on('data', (c) => (body += c))
      secure.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(body)?.[1]), body }))
      secure.on('error', reject)
    })
    socket.on('error', reject)
  })
}

describe('the egress proxy', () => {
  it('refuses loopback under deny, by address and by name, over plain HTTP and CONNECT; the target sees nothing', async () => {
    const before = site.requests.length
    const egress = await startEgress({ privateTargets: 'deny' })
    try {
      const plain = await throughProxy(egress.url, `${site.origin}/metadata`)
      expect(plain.status).toBe(403)
      expect(plain.body).toContain('127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)')
      expect((await throughProxy(egress.url, `http://localhost:${site.port}/by-name`)).status).toBe(403)
      expect((await throughProxy(egress.url, tls.origin)).status).toBe(403)
      expect(site.requests.length).toBe(before)
      expect(egress.refusals).toEqual([
        '127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)',
        'localhost resolves to a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)',
      ])
    } finally {
      await egress.close()
    }
  })

  it('carries what an exception allows, both ways', async () => {
    const egress = await startEgress({ privateTargets: 'deny', allowedTargets: [`127.0.0.1:${site.port}`, `127.0.0.1:${tls.port}`] })
    try {
      const plain = await throughProxy(egress.url, `${site.origin}/`)
      expect(plain).toMatchObject({ status: 200 })
      expect(plain.body).toContain('internal page')
      const secure = await throughProxy(egress.url, tls.origin)
      expect(secure.status).toBe(200)
      expect(secure.body).toContain('over tls')
      expect(egress.refusals).toEqual([])
    } finally {
      await egress.close()
    }
  })
})

function options(extra: ScriptRunOptions = {}): ScriptRunOptions {
  return { runtimeCache: cache, workDir: work, timeoutMs: 60_000, privateTargets: 'deny', ...extra }
}

function check(checkType: 'BROWSER' | 'MULTI_STEP', script: string): ScriptCheck {
  return {
    name: 'inside',
    checkType,
    script,
    scriptPath: 'checks/inside.spec.ts',
    environmentVariables: [
      { key: 'SITE', value: site.origin },
      { key: 'TLS', value: tls.origin },
    ],
  }
}

const browserIt = hasChromium ? it : it.skip

describe('browser checks under deny', () => {
  browserIt(
    'the page, its fetch, its API requests and a context with a proxy of its own reach nothing on loopback; the run fails with hasErrors',
    async () => {
      const before = site.requests.length
      const result = await runScript(
        check(
          'BROWSER',
          `
      import { test, expect } from '@playwright/test'
      test('the page', async ({ page }) => {
        const answer = await page.goto(process.env.SITE + '/page')
        console.log('page status', answer?.status())
      })
      test('the page fetches', async ({ page }) => {
        await page.goto('about:blank')
        console.log('fetch', await page.evaluate((url) => fetch(url).then((r) => String(r.status), (e) => 'failed ' + e), process.env.SITE + '/fetch'))
      })
      test('an API request', async ({ page }) => {
        const answer = await page.request.get(process.env.SITE + '/api').catch((e) => e)
        console.log('api', answer instanceof Error ? 'failed' : answer.status())
      })
      test('a context of its own', async ({ browser }) => {
        const context = await browser.newContext({ proxy: { server: 'direct://' } })
        await (await context.newPage()).goto(process.env.SITE + '/direct')
      })
    `,
        ),
        options(),
      )
      expect(result.hasErrors).toBe(true)
      expect(result.status).toBe('FAILED')
      expect(result.error).toContain('127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)')
      expect(result.details.violations).toEqual(
        expect.arrayContaining([
          '127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)',
          expect.stringMatching(/^newContext with a proxy of its own is refused/),
        ]),
      )
      expect(result.details.logs).toContain('page status 403')
      expect(result.details.logs).toMatch(/fetch (failed|403)/)
      expect(result.details.logs).toMatch(/api (failed|403)/)
      // nothing reached the site
      expect(site.requests.length).toBe(before)
    },
    90_000,
  )

  browserIt(
    'an exception lets the browser through the proxy, over HTTP and HTTPS',
    async () => {
      const result = await runScript(
        check(
          'BROWSER',
          `
      import { test, expect } from '@playwright/test'
      test.use({ ignoreHTTPSErrors: true })
      test('inside', async ({ page }) => {
        await page.goto(process.env.SITE + '/')
        await expect(page.locator('#p')).toHaveText('internal page')
        await page.goto(process.env.TLS + '/')
        await expect(page.locator('#p')).toHaveText('over tls')
        expect((await page.request.get(process.env.SITE + '/?api=1')).status()).toBe(200)
      })
    `,
        ),
        options({ allowedTargets: [`127.0.0.1:${site.port}`, `127.0.0.1:${tls.port}`] }),
      )
      expect(result.error).toBeNull()
      expect(result.status).toBe('PASSED')
      expect(sitePaths()).toEqual(expect.arrayContaining(['/', '/?api=1']))
    },
    90_000,
  )
})

describe('multi-step checks under deny', () => {
  it("the script's own requests are refused on loopback, and allowed by an exception", async () => {
    const before = site.requests.length
    const script = `
      import { test, expect } from '@playwright/test'
      test('inside', async ({ request }) => {
        const answer = await request.get(process.env.SITE + '/multi')
        expect(answer.status()).toBe(200)
      })
    `
    const refused = await runScript(check('MULTI_STEP', script), options())
    expect(refused.status).toBe('FAILED')
    // contained, the request goes out through the egress proxy, its one way out, which refuses it; else the guard in its process does
    expect(refused.error).toContain(
      containment().available
        ? 'the sandbox refused: 127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)'
        : `connection to 127.0.0.1:${site.port} refused by the private-target policy (--private-targets deny): loopback address (127.0.0.0/8)`,
    )
    expect(site.requests.length).toBe(before)
    const allowed = await runScript(check('MULTI_STEP', script), options({ allowedTargets: [`127.0.0.1:${site.port}`] }))
    expect(allowed.error).toBeNull()
    expect(allowed.status).toBe('PASSED')
    expect(sitePaths()).toContain('/multi')
  }, 90_000)
})
