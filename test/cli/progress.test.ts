/**
 * A long apply says what it does: on a terminal one line rewritten in place (done/total per
 * kind, "waiting N s for the rate limit" while paced), in CI a plain line every few seconds
 * without a control character, and with --format json nothing on stdout but the document.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest'
import { Progress, progressMode } from '../../src/cli/progress.js'
import { Pacer } from '../../src/api/pacing.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitorsProcess, monitorsWithStreams } from '../helpers/cli.js'

/** A stream that says it is a terminal and keeps what is written. */
function fakeTerminal(columns = 80) {
  const writes: string[] = []
  return { isTTY: true, columns, writes, write: (text: string) => writes.push(text), text: () => writes.join('') }
}

/** What a terminal shows once every `\r`, newline and "clear to the end of the line" has done its work. */
function screen(text: string): string {
  const lines = ['']
  let column = 0
  for (const token of text.split(/(\r|\n|\x1b\[K)/)) {
    if (token === '') continue
    const row = lines.length - 1
    if (token === '\r') column = 0
    else if (token === '\n') {
      lines.push('')
      column = 0
    } else if (token === '\x1b[K') lines[row] = lines[row].slice(0, column)
    else {
      lines[row] = lines[row].slice(0, column) + token + lines[row].slice(column + token.length)
      column += token.length
    }
  }
  return lines.join('\n')
}

describe('the progress line on a terminal', () => {
  it('counts done/total per kind, rewrites one line in place, and shows a wait for the rate limit', () => {
    const term = fakeTerminal(120)
    let now = 0
    let wait = 0
    const progress = new Progress({
      verb: 'Applying',
      totals: [
        ['dns-check', 3],
        ['icmp-check', 2],
      ],
      stream: term,
      mode: 'tty',
      timers: false,
      now: () => now,
      waitMs: () => wait,
    })
    progress.tick()
    expect(term.text()).toBe('\rApplying: 0/5 done (dns-check 0/3, icmp-check 0/2)\x1b[K')
    progress.finished('dns-check', true)
    progress.finished('icmp-check', false)
    now = 4000
    wait = 11_200
    progress.tick()
    expect(term.writes.at(-1)).toBe('\rApplying: 2/5 done (dns-check 1/3, icmp-check 1/2), 1 failed; waiting 12 s for the rate limit\x1b[K')
    // nothing changed: nothing is written again
    const count = term.writes.length
    progress.tick()
    expect(term.writes).toHaveLength(count)
    // other output clears the line first, then the line comes back under it
    progress.around(() => term.write('+ dns-check a created\n'))
    expect(term.writes.slice(count)).toEqual([
      '\r\x1b[K',
      '+ dns-check a created\n',
      '\rApplying: 2/5 done (dns-check 1/3, icmp-check 1/2), 1 failed; waiting 12 s for the rate limit\x1b[K',
    ])
    wait = 0
    progress.finished('dns-check', true)
    progress.tick()
    progress.stop()
    expect(term.writes.at(-1)).toBe('\r\x1b[K')
    expect(screen(term.text())).toBe('+ dns-check a created\n')
    // stopped: the timer's late ticks write nothing
    progress.tick()
    expect(term.writes.at(-1)).toBe('\r\x1b[K')
  })

  it('never wraps: a line wider than the terminal is cut', () => {
    const term = fakeTerminal(40)
    const progress = new Progress({
      verb: 'Applying',
      totals: [
        ['dns-check', 300],
        ['icmp-check', 200],
        ['status-page', 4],
      ],
      stream: term,
      mode: 'tty',
      timers: false,
    })
    progress.tick()
    const line = term.writes[0].replace(/^\r/, '').replace(/\x1b\[K$/, '')
    expect(line.length).toBe(39)
    expect(line.endsWith('…')).toBe(true)
  })

  it('plain lines without a terminal: with the time elapsed, no control character', () => {
    const writes: string[] = []
    let now = 1000
    const progress = new Progress({
      verb: 'Destroying',
      totals: [
        ['status-page', 1],
        ['dns-check', 2],
      ],
      stream: { write: (t: string) => writes.push(t) },
      mode: 'lines',
      timers: false,
      now: () => now,
      waitMs: () => 2500,
    })
    now = 31_000
    progress.finished('status-page', true)
    progress.tick()
    expect(writes).toEqual(['Destroying: 1/3 done (status-page 1/1, dns-check 0/2), 30 s elapsed; waiting 3 s for the rate limit\n'])
    progress.around(() => writes.push('- status-page x deleted\n'))
    progress.stop()
    expect(writes.join('')).not.toMatch(/[\r\x1b]/)
  })

  it('chooses the mode: a terminal, plain lines (every MONITORS_PROGRESS_INTERVAL s), or nothing with --format json', () => {
    const tty = { write: () => true, isTTY: true }
    const pipe = { write: () => true }
    expect(progressMode({ stream: tty, format: 'text', env: {} })).toEqual({ mode: 'tty', intervalMs: 10_000 })
    // --format json: nothing, on a terminal too (stdout is data, and stderr stays quiet)
    expect(progressMode({ stream: tty, format: 'json', env: {} }).mode).toBe('off')
    expect(progressMode({ stream: tty, format: 'text', env: { TERM: 'dumb' } }).mode).toBe('lines')
    expect(progressMode({ stream: pipe, format: 'text', env: {} })).toEqual({ mode: 'lines', intervalMs: 10_000 })
    expect(progressMode({ stream: pipe, format: 'markdown', env: { MONITORS_PROGRESS_INTERVAL: '2.5' } })).toEqual({ mode: 'lines', intervalMs: 2500 })
    expect(progressMode({ stream: pipe, format: 'text', env: { MONITORS_PROGRESS_INTERVAL: '0' } }).mode).toBe('off')
    expect(progressMode({ stream: pipe, format: 'text', env: { MONITORS_PROGRESS_INTERVAL: 'soon' } }).intervalMs).toBe(10_000)
    expect(progressMode({ stream: pipe, format: 'json', env: {} }).mode).toBe('off')
  })
})

describe('the pacer says when it holds requests back', () => {
  it('reports a wait of a second or more until it ends, never the short waits that spread a burst', async () => {
    const pacer = new Pacer({ limit: 2, windowMs: 60_000 })
    expect(pacer.waitingUntil()).toBeUndefined()
    // the window is spent for 0.3 s: a short wait, not shown
    pacer.update({ limit: 2, remaining: 0, resetSeconds: 0.3 })
    const short = pacer.acquire()
    await new Promise((r) => setImmediate(r))
    expect(pacer.waitingUntil()).toBeUndefined()
    ;(await short).done({ limit: 2, remaining: 0, resetSeconds: 1.2 })
    // now for 1.2 s: shown until it ends
    const before = Date.now()
    const long = pacer.acquire()
    await new Promise((r) => setImmediate(r))
    const until = pacer.waitingUntil()
    expect(until).toBeGreaterThanOrEqual(before + 1200)
    expect(until).toBeLessThanOrEqual(Date.now() + 1300)
    ;(await long).done()
    expect(pacer.waitingUntil()).toBeUndefined()
  })
})

describe('a paced apply through the CLI', () => {
  let server: LocalServer
  const KEY = 'progress-key-0123456789abcdef01'
  beforeAll(async () => {
    // four requests per two seconds: an apply of a dozen operations waits for the window several times
    server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'progress' }], rateLimit: { max: 4, timeWindowMs: 2000 } })
  })
  afterAll(async () => {
    await server?.close()
  })
  const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: 'progress', MONITORS_PROGRESS_INTERVAL: '0.2' })
  let projects = 0
  const project = () => {
    const n = ++projects
    const dns = Array.from({ length: 5 }, (_, i) => `new DnsCheck('d${i}', { name: 'P${n} DNS ${i}', request: { query: 'd${i}.example.com' } })`)
    const icmp = Array.from({ length: 3 }, (_, i) => `new IcmpCheck('i${i}', { name: 'P${n} ping ${i}', request: { hostname: 'i${i}.example.com' } })`)
    return makeProject({ 'p.check.ts': `import { DnsCheck, IcmpCheck } from 'monitors-as-code'\n${[...dns, ...icmp].join('\n')}\n` })
  }

  it('in CI (no terminal, a real process): plain progress lines with the wait, never a control character', async () => {
    const result = await monitorsProcess(project(), ['apply', '--yes'], { ...env(), CI: 'true' })
    expect(result.code, result.output).toBe(0)
    const lines = result.stderr.split('\n').filter((l) => l.startsWith('Applying: '))
    expect(lines.length, result.stderr).toBeGreaterThan(0)
    for (const line of lines)
      expect(line).toMatch(/^Applying: \d+\/8 done \(dns-check \d\/5, icmp-check \d\/3\), \d+ s elapsed(; waiting \d+ s for the rate limit)?$/)
    expect(
      lines.some((l) => /; waiting \d+ s for the rate limit$/.test(l)),
      result.stderr,
    ).toBe(true)
    expect(result.output).not.toMatch(/[\r\x1b]/)
    expect(result.stdout).toContain('Apply complete: 8 created, 0 updated, 0 deleted.')
  })

  it('with --format json and no terminal: the document alone on stdout, no progress at all', async () => {
    const result = await monitorsProcess(project(), ['apply', '--yes', '--format', 'json'], { ...env(), CI: 'true' })
    expect(result.code, result.output).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, operations: expect.arrayContaining([expect.objectContaining({ result: 'created' })]) })
    expect(result.stderr).not.toContain('Applying: ')
  })

  it('on a terminal (stderr): the line rewritten in place on stderr, never on stdout; with --format json, nothing', async () => {
    const result = await monitorsWithStreams(project(), ['apply', '--yes'], env(), { stderrTTY: true, columns: 120 })
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Apply complete: 8 created, 0 updated, 0 deleted.')
    expect(result.stdout).not.toMatch(/[\r\x1b]/)
    expect(result.stderr).toContain('\rApplying: 0/8 done (dns-check 0/5, icmp-check 0/3)\x1b[K')
    expect(result.stderr).toMatch(/\rApplying: \d\/8 done \(dns-check \d\/5, icmp-check \d\/3\); waiting \d+ s for the rate limit\x1b\[K/)
    // the line never scrolls: no progress text is followed by a newline, and it is cleared at the end
    expect(result.stderr).not.toMatch(/Applying: [^\r]*\n/)
    expect(screen(result.stderr)).not.toContain('Applying: ')

    const json = await monitorsWithStreams(project(), ['apply', '--yes', '--format', 'json'], env(), { stderrTTY: true, columns: 120 })
    expect(json.code, json.output).toBe(0)
    expect(JSON.parse(json.stdout).operations).toHaveLength(8)
    expect(json.output).not.toContain('Applying: ')
    expect(json.output).not.toMatch(/[\r\x1b]/)
  })
})
