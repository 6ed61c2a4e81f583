/**
 * Badges from real runs: each answer is parsed as SVG, its title names the check and the
 * state the results give (passing, degraded, failing, paused, unknown), in every style.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSvg, type ParsedSvg } from '../../helpers/svg.js'
import { caller } from '../helpers.js'
import { startResultsBench, type ResultsBench } from './results-helpers.js'

const STYLES = ['flat', 'plastic', 'flat-square', 'for-the-badge', 'social'] as const

let bench: ResultsBench

beforeAll(async () => {
  bench = await startResultsBench()
})
afterAll(async () => {
  await bench.close()
})

async function badge(checkId: string, query = ''): Promise<ParsedSvg> {
  const answer = await bench.call('GET', `/v1/badges/checks/${checkId}${query}`)
  expect(answer.status).toBe(200)
  expect(answer.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
  return parseSvg(answer.text)
}

/** the badge's title, "label: message" (for-the-badge is upper case, social capitalised) */
function title(svg: ParsedSvg): string {
  return svg.texts.title[0].toLowerCase()
}

describe('badges', () => {
  it('unknown for a check that never ran, in every style; 404 for an unknown check; the key is required', async () => {
    const id = await bench.createCheck('badge-new.example.test', { name: 'Badge New' })
    for (const style of STYLES) {
      const svg = await badge(id, `?style=${style}`)
      expect(svg.root).toBe('svg')
      expect(title(svg)).toBe('badge new: unknown')
      expect(svg.rootAttributes['aria-label'].toLowerCase()).toBe('badge new: unknown')
    }
    const unknown = await bench.call('GET', `/v1/badges/checks/${randomUUID()}`)
    expect(unknown.status).toBe(404)
    expect(unknown.json.message).toBe('Check not found')
    expect((await caller(bench.server, null)('GET', `/v1/badges/checks/${id}`)).status).toBe(401)
  })

  it('passing, degraded and failing from the newest run, with the response time when asked', async () => {
    const query = 'badge.example.test'
    // thresholds far from a loaded machine's answer times: a passing run answers at once, a degraded one after 1.5 s
    const id = await bench.createCheck(query, { name: 'DNS <prod> & co', degradedResponseTime: 1000, maxResponseTime: 5000 })

    bench.dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const passing = await bench.runAndRecord(id)
    expect(passing.result.status).toBe('PASSED')
    for (const style of STYLES) expect(title(await badge(id, `?style=${style}`))).toBe('dns <prod> & co: passing')
    const ms = Math.round(passing.result.responseTime!)
    expect(title(await badge(id, '?responseTime=true'))).toBe(`dns <prod> & co: passing | ${ms} ms`)
    expect(title(await badge(id, '?responseTime=false'))).toBe('dns <prod> & co: passing')

    bench.dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }], delayMs: 1500 })
    const degraded = await bench.runAndRecord(id)
    expect(degraded.result.status).toBe('DEGRADED')
    for (const style of STYLES) expect(title(await badge(id, `?style=${style}`))).toBe('dns <prod> & co: degraded')

    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    const failing = await bench.runAndRecord(id)
    expect(failing.result.status).toBe('FAILED')
    for (const style of STYLES) {
      const svg = await badge(id, `?style=${style}&responseTime=true`)
      expect(title(svg)).toBe(`dns <prod> & co: failing | ${Math.round(failing.result.responseTime!)} ms`)
    }
  })

  it('three themes, each its own colours; paused for a deactivated check', async () => {
    const query = 'badge-theme.example.test'
    const id = await bench.createCheck(query, { name: 'themed' })
    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    await bench.runAndRecord(id)
    const fills = new Map<string, string[]>()
    for (const theme of ['default', 'light', 'dark']) {
      const svg = await badge(id, `?theme=${theme}`)
      expect(title(svg)).toBe('themed: failing')
      fills.set(theme, svg.fills)
    }
    expect(fills.get('default')).toContain('#e05d44')
    expect(new Set([...fills.values()].map((f) => f.join(','))).size).toBe(3)

    await bench.call('PUT', `/v1/checks/dns/${id}`, {
      name: 'themed',
      activated: false,
      request: { query, nameServer: bench.dns.address, port: bench.dns.port },
    })
    for (const style of STYLES) expect(title(await badge(id, `?style=${style}&responseTime=true`))).toBe('themed: paused')
  })

  it("refuses a style, theme or responseTime outside the spec's values", async () => {
    const id = await bench.createCheck('badge-bad.example.test')
    for (const query of ['?style=round', '?theme=blue', '?responseTime=yes']) {
      const answer = await bench.call('GET', `/v1/badges/checks/${id}${query}`)
      expect(answer.status).toBe(400)
      expect(answer.json.attributes.source).toBe('query')
      expect(answer.json.attributes.keys).toEqual([query.slice(1).split('=')[0]])
    }
  })
})
