/**
 * Check statuses and badges from real runs: DNS checks created through the API, run with
 * src/runner against a DNS server on 127.0.0.1, each FINAL result recorded with recordResult,
 * then read back through the HTTP routes.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordResult } from '../../../src/server/results/index.js'
import type { CheckRunResult } from '../../../src/runner/index.js'
import { startResultsBench, type ResultsBench } from './results-helpers.js'
import { expect400 } from '../helpers.js'

const execFileAsync = promisify(execFile)
const JITI = fileURLToPath(new URL('../../../node_modules/jiti/lib/jiti-cli.mjs', import.meta.url))
const RECORDER = fileURLToPath(new URL('../../helpers/record-results.ts', import.meta.url))

let bench: ResultsBench

beforeAll(async () => {
  bench = await startResultsBench()
})
afterAll(async () => {
  await bench.close()
})

const answerOk = (name: string, delayMs = 0) => bench.dns.set(name, 'A', { records: [{ type: 'A', data: '192.0.2.1' }], delayMs })
const answerServfail = (name: string) => bench.dns.set(name, 'A', { rcode: 'SERVFAIL' })

describe('check statuses', () => {
  it('a check that never ran has no status; an unknown check is a 404', async () => {
    const id = await bench.createCheck('never.example.test')
    const list = await bench.call('GET', '/v1/check-statuses')
    expect(list.status).toBe(200)
    expect(list.json.map((s: { checkId: string }) => s.checkId)).not.toContain(id)
    const own = await bench.call('GET', `/v1/check-statuses/${id}`)
    expect(own.status).toBe(404)
    expect(own.json.message).toBe('Check status not found')
    const unknown = await bench.call('GET', `/v1/check-statuses/${randomUUID()}`)
    expect(unknown.status).toBe(404)
    expect(unknown.json.message).toBe('Check not found')
  })

  it('follows passing and failing runs, with the longest and shortest run ever recorded', async () => {
    const id = await bench.createCheck('status.example.test', { name: 'status check' })
    answerOk('status.example.test')
    const first = await bench.runAndRecord(id, { location: 'eu-west-1' })
    expect(first.result.status).toBe('PASSED')

    let status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(status).toEqual({
      name: 'status check',
      checkId: id,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      longestRun: first.result.responseTime,
      shortestRun: first.result.responseTime,
      lastRunLocation: 'eu-west-1',
      lastCheckRunId: first.outcome.checkRunId,
      sslDaysRemaining: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })

    answerOk('status.example.test', 150)
    const slow = await bench.runAndRecord(id, { location: 'us-east-1' })
    expect(slow.result.status).toBe('PASSED')
    expect(slow.result.responseTime!).toBeGreaterThan(first.result.responseTime!)

    answerServfail('status.example.test')
    const failing = await bench.runAndRecord(id, { location: 'eu-west-1' })
    expect(failing.result.status).toBe('FAILED')

    const times = [first, slow, failing].map((r) => r.result.responseTime!)
    status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(status.hasFailures).toBe(true)
    expect(status.hasErrors).toBe(false)
    expect(status.longestRun).toBe(Math.max(...times))
    expect(status.shortestRun).toBe(Math.min(...times))
    expect(status.lastRunLocation).toBe('eu-west-1')
    expect(status.lastCheckRunId).toBe(failing.outcome.checkRunId)

    const list = (await bench.call('GET', '/v1/check-statuses')).json
    expect(list.filter((s: { checkId: string }) => s.checkId === id)).toEqual([status])

    // back to passing
    answerOk('status.example.test')
    await bench.runAndRecord(id)
    status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(status.hasFailures).toBe(false)

    // a renamed check's status carries its new name
    await bench.call('PUT', `/v1/checks/dns/${id}`, {
      name: 'renamed',
      doubleCheck: false,
      request: { query: 'status.example.test', nameServer: bench.dns.address, port: bench.dns.port },
    })
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).json.name).toBe('renamed')
  })

  it('a server-side error is hasErrors, not hasFailures', async () => {
    // no name server at all: an error outside the check's control
    const id = await bench.createCheck('errors.example.test', { request: { nameServer: 'name-server.invalid' } })
    const run = await bench.runAndRecord(id)
    const status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(status.hasFailures || status.hasErrors).toBe(true)
    expect(status.hasFailures).toBe(run.result.hasFailures)
    expect(status.hasErrors).toBe(run.result.hasErrors)
  })

  it('recording the same result twice changes nothing; an older result does not override a newer one', async () => {
    const id = await bench.createCheck('twice.example.test')
    answerOk('twice.example.test')
    const check = (await bench.call('GET', `/v1/checks/${id}`)).json
    const result = { ...(await bench.run(id)), id: randomUUID() }
    expect((await recordResult(bench.store, check, result)).recorded).toBe(true)
    const before = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect((await recordResult(bench.store, check, result)).recorded).toBe(false)
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).json).toEqual(before)
    // ids are remembered for the results' retention, then forgotten
    expect(await bench.store.checkStatuses.forgetResultsBefore(new Date(Date.now() - 60_000).toISOString())).toBe(0)
    expect((await recordResult(bench.store, check, result)).recorded).toBe(false)
    expect(await bench.store.checkStatuses.forgetResultsBefore(new Date(Date.now() + 1_000).toISOString())).toBeGreaterThan(0)
    expect((await recordResult(bench.store, check, result)).recorded).toBe(true)

    // a run an hour older arrives late: it fails, but the newest run passed
    answerServfail('twice.example.test')
    const late = await bench.runAndRecord(id, { clockOffsetMs: -3_600_000 })
    expect(late.result.hasFailures).toBe(true)
    const after = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(after.hasFailures).toBe(false)
    expect(after.lastCheckRunId).toBe(result.id)
    expect(after.longestRun).toBe(Math.max(result.responseTime!, late.result.responseTime!))
  })

  it('results recorded at once by three processes on one database all count', async () => {
    const id = await bench.createCheck('parallel.example.test')
    const check = (await bench.call('GET', `/v1/checks/${id}`)).json
    const results: Array<CheckRunResult & { id: string }> = []
    for (const delayMs of [0, 40, 80, 0, 120, 20, 60, 10, 90]) {
      answerOk('parallel.example.test', delayMs)
      results.push({ ...(await bench.run(id)), id: randomUUID() })
    }
    const dir = mkdtempSync(join(tmpdir(), 'monitors-jobs-'))
    try {
      // two other processes each record a third, while this one records the rest
      const children = [0, 1].map((n) => {
        const jobs = join(dir, `jobs-${n}.json`)
        writeFileSync(jobs, JSON.stringify(results.filter((_, i) => i % 3 === n).map((result) => ({ check, result }))))
        return execFileAsync(process.execPath, [JITI, RECORDER, bench.dbPath, jobs])
      })
      const own = Promise.all(results.filter((_, i) => i % 3 === 2).map((result) => recordResult(bench.store, check, result)))
      const outcomes = [...(await Promise.all(children)).flatMap((c) => JSON.parse(c.stdout)), ...(await own)]
      expect(outcomes).toHaveLength(results.length)
      expect(outcomes.every((o: { recorded: boolean }) => o.recorded)).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    const times = results.map((r) => r.responseTime!)
    expect(status.longestRun).toBe(Math.max(...times))
    expect(status.shortestRun).toBe(Math.min(...times))
    const newest = results.reduce((a, b) => (b.startedAt >= a.startedAt ? b : a))
    expect(status.lastCheckRunId).toBe(newest.id)
  }, 60_000)

  it('a deleted check takes its status with it', async () => {
    const id = await bench.createCheck('deleted.example.test')
    answerOk('deleted.example.test')
    await bench.runAndRecord(id)
    const pending = { ...(await bench.run(id)), id: randomUUID() }
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).status).toBe(200)
    expect((await bench.call('DELETE', `/v1/checks/${id}`)).status).toBe(204)
    expect((await bench.call('GET', '/v1/check-statuses')).json.map((s: { checkId: string }) => s.checkId)).not.toContain(id)
    // a result arriving after the deletion is dropped
    const outcome = await recordResult(bench.store, { id, name: 'gone' }, pending)
    expect(outcome.recorded).toBe(false)
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).status).toBe(404)
  })
})

describe('GET /v1/check-statuses by pages', () => {
  it('answers the whole list without limit or page, and the page asked for with them (content-range counts them all)', async () => {
    for (const name of ['paged-1.example.test', 'paged-2.example.test', 'paged-3.example.test']) {
      const id = await bench.createCheck(name)
      answerOk(name)
      await bench.runAndRecord(id)
    }
    const whole = (await bench.call('GET', '/v1/check-statuses')).json as Array<{ checkId: string }>
    expect(whole.length).toBeGreaterThanOrEqual(3)
    const second = await bench.call('GET', '/v1/check-statuses?limit=2&page=2')
    expect(second.json.map((s: { checkId: string }) => s.checkId)).toEqual(whole.slice(2, 4).map((s) => s.checkId))
    expect(second.headers.get('content-range')).toBe(`2-${Math.min(3, whole.length - 1)}/${whole.length}`)
    expect((await bench.call('GET', '/v1/check-statuses?limit=0')).json.attributes.keys).toEqual(['limit'])
  })
})

describe('the filters of GET /v1/checks', () => {
  const names = (answer: { json: Array<{ name: string }> }) => answer.json.map((c) => c.name)

  it('search, status, tag[], apiCheckUrlFilterPattern and applyGroupSettings narrow the list in the store; paging counts the filtered set', async () => {
    const tags = ['filters-of-lists']
    const checkout = await bench.createCheck('checkout.filters.test', { name: 'Shop Checkout EU', tags: [...tags, 'eu'] })
    const search = await bench.createCheck('search.filters.test', { name: 'shop search', tags: [...tags, 'us'] })
    const blog = await bench.createCheck('blog.filters.test', { name: 'Blog', tags, degradedResponseTime: 50 })
    await bench.createCheck('ecole.filters.test', { name: 'École primaire', tags })
    await bench.createCheck('never.filters.test', { name: 'Never ran', tags })
    answerOk('checkout.filters.test')
    answerServfail('search.filters.test')
    answerOk('blog.filters.test', 150)
    for (const id of [checkout, search, blog]) await bench.runAndRecord(id)

    const list = (query: string) => bench.call('GET', `/v1/checks?tag=filters-of-lists&limit=100${query}`)
    // search: a part of the name, any case (also beyond ASCII)
    expect(names(await list('&search=SHOP'))).toEqual(['Shop Checkout EU', 'shop search'])
    expect(names(await list('&search=éCOLE'))).toEqual(['École primaire'])
    expect(names(await list('&search=nothing-like-it'))).toEqual([])
    // status: from each check's newest run; a check that never ran has none
    expect(names(await list('&status=passing'))).toEqual(['Shop Checkout EU'])
    expect(names(await list('&status=failing'))).toEqual(['shop search'])
    expect(names(await list('&status=degraded'))).toEqual(['Blog'])
    expect(expect400(await list('&status=paused'), 'query')).toEqual(['status'])
    // tag[] is tag (a check carrying any of them)
    const bracketed = await bench.call('GET', '/v1/checks?tag[]=eu&tag[]=us&limit=100')
    expect(names(bracketed)).toEqual(['Shop Checkout EU', 'shop search'])
    expect(names(await bench.call('GET', '/v1/checks?tag=eu&tag[]=us&limit=100'))).toEqual(['Shop Checkout EU', 'shop search'])
    // a page of the filtered set, counted
    const page = await bench.call('GET', '/v1/checks?tag=filters-of-lists&search=shop&limit=1&page=2')
    expect(names(page)).toEqual(['shop search'])
    expect(page.headers.get('content-range')).toBe('1-1/2')
    const first = await bench.call('GET', '/v1/checks?tag=filters-of-lists&search=shop&limit=1')
    // the keyset link carries the filters
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1]
    expect(next).toMatch(/search=shop/)
    expect(names(await bench.call('GET', next!))).toEqual(['shop search'])

    // apiCheckUrlFilterPattern: a part of an API check's URL, any case; API checks only
    const api = (name: string, url: string) => bench.call('POST', '/v1/checks/api', { name, activated: false, tags, request: { url, method: 'GET' } })
    expect((await api('Health', 'https://www.MyApp.com/health')).status).toBe(201)
    expect((await api('Other', 'https://other.example/myapp.com')).status).toBe(201)
    expect((await api('Elsewhere', 'https://elsewhere.example/')).status).toBe(201)
    expect(names(await list('&apiCheckUrlFilterPattern=myapp.com'))).toEqual(['Health', 'Other'])
    expect(names(await list('&apiCheckUrlFilterPattern=WWW.myapp'))).toEqual(['Health'])
    expect(names(await list('&apiCheckUrlFilterPattern=filters.test'))).toEqual([])
    expect(names(await list('&apiCheckUrlFilterPattern=myapp&checkType=DNS'))).toEqual([])

    // applyGroupSettings: a check of a group answered as it runs in it
    const group = await bench.call('POST', '/v1/check-groups', { name: 'Filters group', locations: ['ap-south-1'], muted: true })
    expect(group.status).toBe(201)
    const member = await bench.createCheck('member.filters.test', { name: 'Grouped', tags, groupId: group.json.id, locations: null })
    const plain = (await list('&search=grouped')).json[0]
    const applied = await list('&search=grouped&applyGroupSettings=true')
    expect(plain).toMatchObject({ id: member, locations: null, muted: false })
    expect(applied.json[0]).toMatchObject({ id: member, locations: ['ap-south-1'], muted: true })
    expect((await list('&search=shop&applyGroupSettings=true')).json).toEqual((await list('&search=shop')).json)
    expect((await bench.call('GET', `/v1/checks/${member}?applyGroupSettings=true`)).json).toEqual(applied.json[0])
    expect((await bench.call('GET', `/v1/checks/${member}?applyGroupSettings=false`)).json).toEqual(plain)
    expect(expect400(await bench.call('GET', `/v1/checks/${member}?applyGroupSettings=yes`), 'query')).toEqual(['applyGroupSettings'])
  })
})
