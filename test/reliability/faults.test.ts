import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { parseFaults, startLocalServer } from '../../src/server/index.js'
import { monitors, repo } from '../helpers/cli.js'

const KEY = 'faults-key'
const auth = { authorization: `Bearer ${KEY}` }

async function statuses(seed: number, n: number) {
  const server = await startLocalServer({ apiKeys: [{ key: KEY }], faults: '500:0.2,429:0.2', seed, rateLimit: { max: 100000, timeWindowMs: 60000 } })
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const res = await request(`${server.url}/v1/runtimes`, { headers: auth })
    await res.body.dump()
    out.push(res.statusCode)
  }
  const counts = server.faultCounts()
  await server.close()
  return { out, counts }
}

describe('fault injection', () => {
  it('reads fault specs and refuses bad ones with a clear message', () => {
    expect(parseFaults('500:0.1,429:0.05,reset:0.05,latency:0-200ms')).toEqual({
      error500: 0.1,
      error429: 0.05,
      reset: 0.05,
      hang: 0,
      latency: { minMs: 0, maxMs: 200 },
    })
    expect(() => parseFaults('500:2')).toThrow('500 needs a probability from 0 to 1 (got "2")')
    expect(() => parseFaults('teapot:0.1')).toThrow('unknown fault "teapot"')
    expect(() => parseFaults('latency:fast')).toThrow('latency must look like latency:0-200ms')
    expect(() => parseFaults('500:0.6,reset:0.6')).toThrow('add up to 1.2')
  })

  it('is reproducible: the same seed gives the same faults, another seed others', async () => {
    const a = await statuses(7, 60)
    const b = await statuses(7, 60)
    const c = await statuses(8, 60)
    expect(a.out).toEqual(b.out)
    expect(a.out).not.toEqual(c.out)
    expect(a.out.filter((s) => s === 500).length).toBe(a.counts!['500'])
    expect(a.out.filter((s) => s === 429).length).toBe(a.counts!['429'])
    expect(a.counts!['500']).toBeGreaterThan(0)
    expect(a.counts!['429']).toBeGreaterThan(0)
    expect(a.out.filter((s) => s === 200).length).toBeGreaterThan(0)
  })

  it('an injected 500 or 429 changes nothing; a reset makes the change and loses the answer', async () => {
    const server = await startLocalServer({ apiKeys: [{ key: KEY }], faults: 'reset:1' })
    const body = JSON.stringify({ name: 'Lost answer', request: { query: 'example.com' } })
    await expect(
      request(`${server.url}/v1/checks/dns`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body }).then((r) => r.body.text()),
    ).rejects.toThrow()
    await server.close()

    const failing = await startLocalServer({ apiKeys: [{ key: KEY }], faults: '500:0.5,429:0.5' })
    for (let i = 0; i < 10; i++) {
      const res = await request(`${failing.url}/v1/checks/dns`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body })
      const answer = (await res.body.json()) as { statusCode: number; error: string }
      expect([500, 429]).toContain(res.statusCode)
      expect(answer.statusCode).toBe(res.statusCode)
      if (res.statusCode === 429) expect(res.headers['retry-after']).toBe('1')
    }
    await failing.close()
  })

  it('a reset POST did create the check (what a client must recover by re-reading the list)', async () => {
    const dbPath = `${process.env.TMPDIR ?? '/tmp'}/faults-${process.pid}-${Date.now()}.db`
    const lossy = await startLocalServer({ dbPath, apiKeys: [{ key: KEY }], faults: 'reset:1' })
    const body = JSON.stringify({ name: 'Created anyway', request: { query: 'example.com' } })
    await request(`${lossy.url}/v1/checks/dns`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body })
      .then((r) => r.body.text())
      .catch(() => undefined)
    await lossy.close()
    const clean = await startLocalServer({ dbPath, apiKeys: [{ key: KEY }] })
    const list = (await (await request(`${clean.url}/v1/checks`, { headers: auth })).body.json()) as Array<{ name: string }>
    expect(list.map((c) => c.name)).toEqual(['Created anyway'])
    await clean.close()
  })

  it('a hang holds the request until the client gives up, and the server still closes', async () => {
    const server = await startLocalServer({ apiKeys: [{ key: KEY }], faults: 'hang:1' })
    const started = Date.now()
    await expect(request(`${server.url}/v1/runtimes`, { headers: auth, headersTimeout: 300 })).rejects.toThrow(/timeout/i)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    const pending = request(`${server.url}/v1/runtimes`, { headers: auth }).then(
      (r) => r.statusCode,
      () => 'closed',
    )
    await new Promise((r) => setTimeout(r, 50))
    await server.close()
    expect([503, 'closed']).toContain(await pending)
  })

  it('adds latency within the range', async () => {
    const server = await startLocalServer({ apiKeys: [{ key: KEY }], faults: 'latency:80-100ms' })
    const started = Date.now()
    const res = await request(`${server.url}/v1/runtimes`, { headers: auth })
    await res.body.dump()
    expect(res.statusCode).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(75)
    expect(server.faultCounts()!.latency).toBe(1)
    await server.close()
  })

  it('monitors server --faults refuses a bad spec with one line', async () => {
    const result = await monitors(repo, ['server', '--port', '0', '--db', ':memory:', '--faults', '500:7'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('--faults: 500 needs a probability from 0 to 1 (got "7")')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })
})
