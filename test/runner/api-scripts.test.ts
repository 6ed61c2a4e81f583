import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { apiCheckSchema, type ApiCheckInput } from '../../src/schema/api-check.js'
import { runCheck, type ApiDetails, type RunOptions } from '../../src/runner/index.js'
import { containment } from '../../src/runner/script/jail.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { startDnsServer } from '../helpers/dns-server.js'

/*
 * An API check's setup and teardown scripts (localSetupScript, localTearDownScript, and the
 * snippets it names) run for real in their sandboxed child process, against a server on 127.0.0.1.
 */

let http: HttpServerHandle
let workDir: string
let secretFile: string

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/orders', { body: { orders: [1, 2] } })
  http.route('/created', { status: 201, body: { id: 42 } })
  http.route('/missing', { status: 404, body: 'nope' })
  workDir = mkdtempSync(path.join(tmpdir(), 'api-scripts-test-'))
  // stands for the server's database: a file the scripts must not read
  secretFile = path.join(mkdtempSync(path.join(tmpdir(), 'api-scripts-db-')), 'monitors.db')
  writeFileSync(secretFile, 'SQLite format 3 secret rows')
})

afterAll(async () => {
  await http.close()
  rmSync(workDir, { recursive: true, force: true })
  rmSync(path.dirname(secretFile), { recursive: true, force: true })
})

function check(input: Omit<Partial<ApiCheckInput>, 'request'> & { request?: Partial<ApiCheckInput['request']> }) {
  return apiCheckSchema.parse({
    name: 'scripted',
    ...input,
    request: { method: 'GET', url: `${http.origin}/orders`, ...input.request },
  })
}

const run = (c: ReturnType<typeof check>, options: RunOptions = {}) => runCheck(c, { retries: false, workDir, ...options })
const scriptsOf = (details: unknown) => (details as ApiDetails).scripts ?? []

describe('setup scripts', () => {
  it('a setup script adds a header, a query parameter and a body: the target sees them', async () => {
    const before = http.requests.length
    const result = await run(
      check({
        request: { method: 'POST', bodyType: 'JSON', body: '{}' },
        localSetupScript: `
        request.headers['X-Token'] = 'token-' + process.env.TENANT
        request.queryParameters.page = '2'
        request.body = JSON.stringify({ at: 'setup' })
        console.log('setup ran for', request.url)
      `,
      }),
      { variables: { TENANT: 'acme' } },
    )
    expect(result.error).toBeNull()
    expect(result.status).toBe('PASSED')
    const seen = http.requests.slice(before)
    expect(seen).toHaveLength(1)
    expect(seen[0].headers['x-token']).toBe('token-acme')
    expect(seen[0].path).toBe('/orders?page=2')
    expect(seen[0].body).toBe('{"at":"setup"}')
    const [report] = scriptsOf(result.details)
    expect(report).toMatchObject({ phase: 'setup', script: 'localSetupScript', error: null })
    expect(report.logs).toContain(`setup ran for ${http.origin}/orders`)
  })

  it('runs the setup snippet, then the local script; a variable it sets resolves {{KEY}} in the request', async () => {
    const before = http.requests.length
    const result = await run(
      check({
        setupSnippetId: 7,
        request: { url: `${http.origin}/{{PATH}}`, headers: [{ key: 'Authorization', value: 'Bearer {{TOKEN}}', secret: true }] },
        localSetupScript: `request.headers['X-Order'] = process.env.ORDER`,
      }),
      {
        snippets: {
          7: {
            name: 'Auth helper',
            script: `import { createHash } from 'node:crypto'\nconst token: string = createHash('sha256').update('x').digest('hex').slice(0, 8)\nprocess.env.TOKEN = token\nprocess.env.PATH = 'orders'\nprocess.env.ORDER = 'first'`,
          },
        },
      },
    )
    expect(result.error).toBeNull()
    const seen = http.requests.slice(before)
    expect(seen[0].path).toBe('/orders')
    expect(seen[0].headers.authorization).toMatch(/^Bearer [0-9a-f]{8}$/)
    expect(seen[0].headers['x-order']).toBe('first')
    expect(scriptsOf(result.details).map((r) => r.script)).toEqual(['snippet 7 "Auth helper"', 'localSetupScript'])
  })

  it('a setup script that throws fails the run with hasErrors, naming the script; nothing is sent', async () => {
    const before = http.requests.length
    const result = await run(check({ setupSnippetId: 3 }), { snippets: { 3: { name: 'Broken', script: `throw new Error('no token today')` } } })
    expect(result.hasErrors).toBe(true)
    expect(result.failureKind).toBe('RUNNER_ERROR')
    expect(result.error).toContain('setup script (snippet 3 "Broken") failed: no token today')
    expect(http.requests.length).toBe(before)
  })

  it('a check naming a snippet that is not there fails with hasErrors', async () => {
    const result = await run(check({ tearDownSnippetId: 99 }), { snippets: {} })
    expect(result.hasErrors).toBe(true)
    expect(result.error).toContain('the teardown snippet 99 (tearDownSnippetId) does not exist')
  })

  it('a script that does not compile fails with hasErrors, naming the script and the line', async () => {
    const result = await run(check({ localSetupScript: 'const = 1' }))
    expect(result.hasErrors).toBe(true)
    expect(result.error).toMatch(/setup script \(localSetupScript\) failed: it does not compile: .*line 1/)
  })
})

describe('teardown scripts', () => {
  it('a teardown script sees the status, headers and body, and may change them before the assertions', async () => {
    const result = await run(
      check({
        request: {
          url: `${http.origin}/missing`,
          assertions: [
            { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
            { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'seen 404' },
          ],
        },
        localTearDownScript: `
        console.log('status', response.statusCode, response.statusText, response.body)
        if (response.statusCode === 404) { response.statusCode = 200; response.body = 'seen ' + 404 }
      `,
      }),
    )
    expect(result.error).toBeNull()
    expect(result.status).toBe('PASSED')
    const [report] = scriptsOf(result.details)
    expect(report).toMatchObject({ phase: 'teardown', script: 'localTearDownScript', error: null })
    expect(report.logs).toContain('status 404 Not Found nope')
    expect((result.details as ApiDetails).statusCode).toBe(200)
  })

  it('an assertion a teardown script makes fails the run as an assertion', async () => {
    const result = await run(
      check({
        request: { url: `${http.origin}/created` },
        localTearDownScript: `const assert = require('node:assert'); assert.strictEqual(JSON.parse(response.body).id, 43)`,
      }),
    )
    expect(result.hasFailures).toBe(true)
    expect(result.hasErrors).toBe(false)
    expect(result.failureKind).toBe('ASSERTION')
    expect(result.error).toContain('teardown script (localTearDownScript) failed: AssertionError')
  })
})

describe('the sandbox', () => {
  it('a script that loops is stopped at its limit and fails the run; the next run is unharmed', async () => {
    const looping = check({ localSetupScript: 'while (true) {}' })
    const started = Date.now()
    const result = await run(looping, { scriptLimits: { timeoutMs: 1500 } })
    expect(result.hasErrors).toBe(true)
    expect(result.error).toContain('setup script (localSetupScript) failed: it did not finish within its limit of 1.5 s and was stopped')
    expect(Date.now() - started).toBeLessThan(60_000)
    const fine = await run(check({ localSetupScript: `request.headers.a = 'b'` }))
    expect(fine.status).toBe('PASSED')
  })

  it('a script that allocates without end is stopped at its memory limit', async () => {
    const result = await run(check({ localSetupScript: 'const keep = []; while (true) keep.push(new Array(100000).fill(Math.random()))' }), {
      scriptLimits: { timeoutMs: 60_000, heapLimitMb: 64, memoryLimitMb: 512 },
    })
    expect(result.hasErrors).toBe(true)
    expect(result.error).toMatch(/setup script \(localSetupScript\) failed: .*(ran out of memory|over the memory limit)/)
  })

  it('a script that writes without end is stopped at its disk limit, in its scratch folder as in /tmp and /dev/shm', async () => {
    for (const where of ["require('node:os').tmpdir()", "'/tmp'", "'/dev/shm'"]) {
      const result = await run(
        check({
          localSetupScript: `const fs = require('node:fs'); const block = Buffer.alloc(1 << 20, 120)
          for (let i = 0; i < 64; i++) fs.writeFileSync(require('node:path').join(${where}, 'fill-' + i), block)`,
        }),
        { scriptLimits: { diskLimitBytes: 4 * 1024 * 1024 } },
      )
      expect(result.hasErrors, where).toBe(true)
      expect(result.error, where).toMatch(/ENOSPC|disk limit|the sandbox refused: FileSystemWrite/)
    }
    expect(readdirSync(workDir)).toEqual([])
  })

  it('a script reading /etc/passwd or the server database is refused and fails its run', async () => {
    for (const file of ['/etc/passwd', secretFile]) {
      const result = await run(
        check({ localSetupScript: `request.headers.leak = require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8').slice(0, 40)` }),
      )
      expect(result.hasErrors).toBe(true)
      expect(result.error).toContain('the sandbox refused: FileSystemRead')
      expect(JSON.stringify(result)).not.toContain('SQLite format 3')
      expect(JSON.stringify(result)).not.toContain('root:')
    }
  })

  it("a script cannot start processes, and sees only the check's variables in its environment", async () => {
    const spawn = await run(check({ localSetupScript: `require('node:child_process').execSync('id')` }))
    expect(spawn.hasErrors).toBe(true)
    expect(spawn.error).toContain('the sandbox refused')
    const before = http.requests.length
    process.env.MONITORS_TEST_SERVER_ONLY = 'server-secret'
    try {
      const env = await run(check({ localSetupScript: `request.headers['x-env'] = Object.keys(process.env).sort().join(',')` }), { variables: { A: '1' } })
      expect(env.status).toBe('PASSED')
    } finally {
      delete process.env.MONITORS_TEST_SERVER_ONLY
    }
    expect(http.requests.slice(before)[0].headers['x-env']).toBe('A,HOME,MONITORS,TMPDIR')
  })

  it('a script writes only in its scratch folder, removed after the run', async () => {
    const result = await run(
      check({
        localSetupScript: `require('node:fs').writeFileSync('note.txt', 'x'); require('node:fs').writeFileSync(${JSON.stringify(path.join(workDir, 'outside.txt'))}, 'x')`,
      }),
    )
    expect(result.hasErrors).toBe(true)
    expect(result.error).toContain('the sandbox refused: FileSystemWrite')
    expect(existsSync(path.join(workDir, 'outside.txt'))).toBe(false)
    expect(readdirSync(workDir)).toEqual([])
  })

  it("with privateTargets deny, a script's own connections follow the policy: the allowed target is reached, another loopback port is refused", async () => {
    const other = await startHttpServer()
    other.route('/admin', { body: 'admin secrets' })
    try {
      const policy: RunOptions = { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${new URL(http.origin).port}`] }
      const allowed = await run(
        check({ localSetupScript: `request.headers['x-fetched'] = String((await fetch(${JSON.stringify(`${http.origin}/created`)})).status)` }),
        policy,
      )
      expect(allowed.error).toBeNull()
      expect(allowed.status).toBe('PASSED')
      const before = other.requests.length
      const refused = await run(check({ localSetupScript: `request.body = await (await fetch(${JSON.stringify(`${other.origin}/admin`)})).text()` }), policy)
      expect(refused.hasErrors).toBe(true)
      expect(JSON.stringify(refused)).toContain('refused by the private-target policy')
      expect(JSON.stringify(refused)).not.toContain('admin secrets')
      const http1 = await run(
        check({
          localSetupScript: `await new Promise((resolve, reject) => require('node:http').get(${JSON.stringify(`${other.origin}/admin`)}, resolve).on('error', reject))`,
        }),
        policy,
      )
      expect(http1.hasErrors).toBe(true)
      expect(http1.error).toContain('refused by the private-target policy')
      // a name is checked on every address it resolves to
      const byName = await run(check({ localSetupScript: `await fetch(${JSON.stringify(`http://localhost:${new URL(other.origin).port}/admin`)})` }), policy)
      expect(byName.hasErrors).toBe(true)
      expect(byName.error).toContain('refused by the private-target policy')
      expect(other.requests.length).toBe(before)
    } finally {
      await other.close()
    }
  })

  it("with privateTargets deny, a script's UDP datagrams and DNS servers follow the policy too: the allowed target is reached, another loopback port is refused", async () => {
    const { createSocket } = await import('node:dgram')
    const listen = async () => {
      const socket = createSocket('udp4')
      const got: string[] = []
      socket.on('message', (m) => got.push(m.toString()))
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
      return { socket, got, port: socket.address().port }
    }
    const [open, closed] = await Promise.all([listen(), listen()])
    try {
      // the check's own request goes to the HTTP server of these tests, allowed too
      const policy: RunOptions = { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${new URL(http.origin).port}`, `127.0.0.1:${open.port}`] }
      const send = (port: number, host = '127.0.0.1') => `const s = require('node:dgram').createSocket('udp4')
        await new Promise((resolve, reject) => s.send('hello ' + ${port}, ${port}, ${JSON.stringify(host)}, (e) => (e ? reject(e) : resolve())))
        s.close()`
      const allowed = await run(check({ localSetupScript: send(open.port) }), policy)
      expect(allowed.error).toBeNull()
      const refused = await run(check({ localSetupScript: send(closed.port) }), policy)
      expect(refused.hasErrors).toBe(true)
      expect(refused.error).toContain(`connection to 127.0.0.1:${closed.port} refused by the private-target policy`)
      // by name, with offset and length, and on a connected socket
      const byName = await run(check({ localSetupScript: send(closed.port, 'localhost') }), policy)
      expect(byName.error).toContain('refused by the private-target policy')
      const withLength = await run(
        check({
          localSetupScript: `const s = require('node:dgram').createSocket('udp4')
        await new Promise((resolve, reject) => s.send(Buffer.from('hello'), 0, 5, ${closed.port}, '127.0.0.1', (e) => (e ? reject(e) : resolve())))`,
        }),
        policy,
      )
      expect(withLength.error).toContain('refused by the private-target policy')
      const connected = await run(
        check({
          localSetupScript: `const s = require('node:dgram').createSocket('udp4')
        await new Promise((resolve, reject) => { s.on('error', reject); s.connect(${closed.port}, '127.0.0.1', () => s.send('hello', (e) => (e ? reject(e) : resolve()))) })`,
        }),
        policy,
      )
      expect(connected.error).toContain('refused by the private-target policy')
      // a DNS server of the script's choosing is a UDP target too
      const resolver = await run(
        check({
          localSetupScript: `const { Resolver } = require('node:dns').promises
        const r = new Resolver(); r.setServers(['127.0.0.1:${closed.port}']); await r.resolve4('shop.example')`,
        }),
        policy,
      )
      expect(resolver.error).toContain('refused by the private-target policy')
      const global = await run(check({ localSetupScript: `require('node:dns').setServers(['127.0.0.1:${closed.port}'])` }), policy)
      expect(global.error).toContain('refused by the private-target policy')
      await new Promise((r) => setTimeout(r, 200))
      // contained, the run's network is its own: a datagram it may send reaches nothing outside it
      expect(open.got).toEqual(containment().available ? [] : [`hello ${open.port}`])
      expect(closed.got).toEqual([])
    } finally {
      open.socket.close()
      closed.socket.close()
    }
  })

  it('with privateTargets deny, the guard holds whatever the spelling, the options, the lookup or the resolver; a refusal the script catches still fails its run', async () => {
    const other = await startHttpServer()
    other.route('/admin', { body: 'admin secrets' })
    const dns = await startDnsServer()
    dns.set('leak.test', 'TXT', { records: [{ type: 'TXT', data: 'dns secrets' }] })
    const port = new URL(other.origin).port
    // 127.0.0.2 is an exception here: a getter answers it first, then the address it is not
    const policy: RunOptions = { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${new URL(http.origin).port}`, '127.0.0.2'] }
    const readRaw = (connect: string) => `const net = require('node:net')
      request.body = await new Promise((resolve, reject) => {
        const s = ${connect}
        let text = ''
        s.on('connect', () => s.write('GET /admin HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'))
        s.on('data', (c) => (text += c))
        s.on('end', () => resolve(text))
        s.on('error', reject)
      })`
    try {
      const attacks = {
        'an IPv4-mapped address in hex': `request.body = await (await fetch('http://[::ffff:7f00:1]:${port}/admin')).text()`,
        'an IPv4-mapped address written out': readRaw(`net.connect({ host: '0:0:0:0:0:FFFF:127.0.0.1', port: ${port} })`),
        'options that answer differently when read again': readRaw(
          `net.connect({ reads: 0, get host() { return this.reads++ < 2 ? '127.0.0.2' : '127.0.0.1' }, port: ${port} })`,
        ),
        'a lookup that cannot be replaced': readRaw(
          `net.connect(Object.defineProperty({ host: 'localhost', port: ${port} }, 'lookup', { enumerable: true, get: () => (h, o, cb) => (o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)), set: () => {} }))`,
        ),
        "a resolver's own handle": `const r = new (require('node:dns').promises.Resolver)(); r._handle.setServers([[4, '127.0.0.1', ${dns.port}]]); request.body = JSON.stringify(await r.resolveTxt('leak.test'))`,
        'a refusal the script catches': `try { await fetch('${other.origin}/admin') } catch (e) { request.body = 'nothing to see' }`,
      }
      const refused =
        /^setup script \(localSetupScript\) failed: the sandbox refused: connection to .* refused by the private-target policy \(--private-targets deny\)/
      const before = other.requests.length
      for (const [attack, script] of Object.entries(attacks)) {
        const result = await run(check({ localSetupScript: script }), policy)
        expect(result.hasErrors, attack).toBe(true)
        // the copy of the options is what was checked: the connection goes to the exception, where nothing listens
        if (attack.startsWith('options')) expect(result.error, attack).toMatch(/ECONNREFUSED 127\.0\.0\.2:/)
        else {
          expect(result.error, attack).toMatch(refused)
          expect(scriptsOf(result.details)[0].error, attack).toContain('the sandbox refused')
        }
        expect(JSON.stringify(result), attack).not.toMatch(/admin secrets|dns secrets/)
      }
      expect(other.requests.length).toBe(before)
      expect(dns.queries).toEqual([])
    } finally {
      await other.close()
      await dns.close()
    }
  })

  it('secret values are scrubbed from the logs and errors of the scripts', async () => {
    const result = await run(
      check({
        localSetupScript: `console.log('token is', process.env.API_TOKEN, Buffer.from('u:' + process.env.API_TOKEN).toString('base64')); throw new Error('bad ' + process.env.API_TOKEN)`,
      }),
      { variables: { API_TOKEN: { value: 's3cr3t-value', secret: true } } },
    )
    expect(result.hasErrors).toBe(true)
    const text = JSON.stringify(result)
    expect(text).not.toContain('s3cr3t-value')
    expect(text).not.toContain(Buffer.from('u:s3cr3t-value').toString('base64').slice(4, 16))
    expect(result.error).toContain('bad ********')
  })
})
