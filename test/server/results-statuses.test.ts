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
import { recordResult } from '../../src/server/results/index.js'
import type { CheckRunResult } from '../../src/runner/index.js'
import { parseSvg } from '../helpers/svg.js'
import { startResultsBench, type ResultsBench } from './results-helpers.js'

const execFileAsync = promisify(execFile)
const JITI = fileURLToPath(new URL('../../node_modules/jiti/lib/jiti-cli.mjs', import.meta.url))
const RECORDER = fileURLToPath(new URL('../helpers/record-results.ts', import.meta.url))

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
    await bench.call('PUT', `/v1/checks/dns/${id}`, { name: 'renamed', doubleCheck: false, request: { query: 'status.example.test', nameServer: bench.dns.address, port: bench.dns.port } })
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
