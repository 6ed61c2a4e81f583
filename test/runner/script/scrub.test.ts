import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { createScrubber, refusal, SCRUBBED, secretForms, type Scrubber } from '../../../src/runner/script/index.js'
import { ARCHIVE_LIMITS, ByteScrubber, scrubZipFile, type ArchiveLimits } from '../../../src/runner/script/archive.js'
import { finishArtifacts } from '../../../src/runner/script/artifacts.js'
import { zipBomb } from '../../helpers/zip-bomb.js'

const dir = mkdtempSync(join(tmpdir(), 'monitors-scrub-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
/** A zip scrubbed as a run's artifact is: written to a file, rewritten there, read back. */
function scrubbedZip(scrub: Scrubber, zip: Uint8Array): Record<string, Uint8Array> {
  const file = join(dir, `trace-${files++}.zip`)
  writeFileSync(file, zip)
  scrubZipFile(file, scrub)
  return unzipSync(readFileSync(file))
}

describe('scrubbing secrets', () => {
  const secret = 'hunter2/+=?&ü'
  const scrub = createScrubber([secret, ''])

  it('replaces a secret and its URL-encoded, JSON-escaped and base64 forms', () => {
    const basic = Buffer.from(`admin:${secret}`).toString('base64')
    const text = [
      secret,
      encodeURIComponent(secret),
      encodeURI(secret),
      JSON.stringify({ s: secret }),
      `Basic ${basic}`,
      Buffer.from(secret).toString('base64url'),
    ].join(' | ')
    const out = scrub.text(text)
    for (const form of secretForms(secret)) expect(out).not.toContain(form)
    expect(out.startsWith(`${SCRUBBED} | ${SCRUBBED} | ${SCRUBBED} | {"s":"${SCRUBBED}"} | Basic `)).toBe(true)
    // what precedes the secret in the base64 text survives; the secret's bytes do not decode
    expect(Buffer.from(out.split('Basic ')[1].split(' ')[0].replace(/\*+.*/, ''), 'base64').toString()).toMatch(/^admin/)
    expect(Buffer.from(out, 'latin1').toString()).not.toContain('hunter2')
  })

  it('walks objects, keys included, and leaves what holds no secret', () => {
    expect(scrub.deep({ [`k-${secret}`]: [`v ${secret}`, 3, null], other: 'plain' })).toEqual({ [`k-${SCRUBBED}`]: [`v ${SCRUBBED}`, 3, null], other: 'plain' })
    expect(createScrubber([]).empty).toBe(true)
  })

  it('rewrites a trace zip: secrets out of every text entry and names, Authorization headers dropped, images untouched', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3])
    const zip = zipSync({
      'trace.network': strToU8(
        `${JSON.stringify({
          snapshot: {
            request: {
              url: `https://x/?t=${encodeURIComponent(secret)}`,
              headers: [
                { name: 'Authorization', value: 'Bearer not-a-declared-secret' },
                { name: 'Accept', value: '*/*' },
              ],
            },
          },
        })}\n`,
      ),
      'trace.trace': strToU8(`${JSON.stringify({ params: { headers: { authorization: 'Basic abc' }, text: secret } })}\nnot json ${secret}\n`),
      [`resources/${secret.slice(0, 7)}.html`]: strToU8(`<p>${secret}</p>`),
      'resources/shot.png': png,
    })
    const out = scrubbedZip(scrub, zip)
    expect(Object.keys(out).sort()).toEqual(['resources/hunter2.html', 'resources/shot.png', 'trace.network', 'trace.trace'].sort())
    const network = JSON.parse(strFromU8(out['trace.network']).trim())
    expect(network.snapshot.request.headers).toEqual([
      { name: 'Authorization', value: SCRUBBED },
      { name: 'Accept', value: '*/*' },
    ])
    expect(network.snapshot.request.url).toBe(`https://x/?t=${SCRUBBED}`)
    expect(strFromU8(out['trace.trace'])).toBe(
      `${JSON.stringify({ params: { headers: { authorization: SCRUBBED }, text: SCRUBBED } })}\nnot json ${SCRUBBED}\n`,
    )
    expect(strFromU8(out['resources/hunter2.html'])).toBe(`<p>${SCRUBBED}</p>`)
    expect(out['resources/shot.png']).toEqual(png)
  })

  it('drops Authorization headers from a trace even when the run has no secret, in header lists and in call logs', () => {
    const zip = zipSync({
      'trace.trace': strToU8(
        [
          JSON.stringify({ type: 'before', params: { headers: [{ name: 'Authorization', value: 'Bearer zzz-1' }] } }),
          JSON.stringify({ type: 'log', message: '  Authorization: Bearer zzz-2' }),
          JSON.stringify({ type: 'log', message: 'proxy-authorization: Basic zzz-3\nAccept: */*' }),
        ].join('\n'),
      ),
    })
    const out = strFromU8(scrubbedZip(createScrubber([]), zip)['trace.trace'])
    expect(out).not.toMatch(/zzz/)
    expect(out).toContain(`"message":"proxy-authorization: ${SCRUBBED}\\nAccept: */*"`)
  })
})

describe('the browser proxy', () => {
  it("refuses what would reach the server's files, and forwards the rest", () => {
    expect(refusal({ method: 'goto', params: { url: 'file:///etc/passwd' } })).toMatch(/^navigation to file:\/\/\/etc\/passwd refused/)
    expect(refusal({ method: 'goto', params: { url: ' FILE:///x' } })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'view-source:file:///x' } })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'chrome://settings' } })).not.toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { localPaths: ['/etc/passwd'] } })).not.toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { localDirectory: '/srv' } })).not.toBeNull()
    for (const method of ['newCDPSession', 'newBrowserCDPSession', 'saveAs', 'startServer', 'launch', 'connectOverCDP'])
      expect(refusal({ method })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'https://example.test/' } })).toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'about:blank' } })).toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { payloads: [{ name: 'a.txt', buffer: '' }] } })).toBeNull()
    expect(refusal({ method: 'click', params: { selector: 'a' } })).toBeNull()
  })
})

describe('archives in pieces, held to limits', () => {
  const scrub = createScrubber(['hunter2-secret'])
  const write = (zip: Uint8Array) => {
    const file = join(dir, `limits-${files++}.zip`)
    writeFileSync(file, zip)
    return file
  }
  const noise = (n: number) => randomBytes(n)

  it("refuses, and leaves as it was, a zip past a limit: entries, an entry's bytes, all entries' bytes, the ratio, a trace line, not a zip", () => {
    const cases: Array<[Uint8Array, Partial<ArchiveLimits>, RegExp]> = [
      [zipBomb(zlib, 64, 'bomb.bin'), {}, /its entry bomb\.bin inflates to more than 200 times its compressed size \(a zip bomb\?\)/],
      [zipSync({ a: noise(10), b: noise(10), c: noise(10), d: noise(10) }), { maxEntries: 3 }, /it has 4 entries, more than the 3 unpacked/],
      [zipSync({ 'big.bin': noise(3000) }), { maxEntryBytes: 2000 }, /its entry big\.bin inflates to more than/],
      [zipSync({ 'a.bin': noise(2000), 'b.bin': noise(2000) }), { maxTotalBytes: 3000 }, /its entries inflate to more than/],
      [zipSync({ 'trace.trace': strToU8(`{"a":"${'x'.repeat(5000)}"}`) }), { maxLineBytes: 1000 }, /a line of its entry longer than/],
      [noise(5000), {}, /it is not a zip archive/],
    ]
    for (const [zip, limits, message] of cases) {
      const file = write(zip)
      expect(() => scrubZipFile(file, scrub, { ...ARCHIVE_LIMITS, ...limits })).toThrow(message)
      expect(readFileSync(file).equals(Buffer.from(zip))).toBe(true)
      expect(existsSync(`${file}.scrubbing`)).toBe(false)
    }
    // within the limits, the same archives are rewritten
    const file = write(zipSync({ 'a.txt': strToU8('say hunter2-secret'), 'b.bin': noise(100) }))
    scrubZipFile(file, scrub)
    expect(strFromU8(unzipSync(readFileSync(file))['a.txt'])).toBe(`say ${SCRUBBED}`)
  })

  it('replaces a secret split across pieces as in one piece, byte for byte around it', () => {
    const secret = 'pa$$-wörd'
    const forms = createScrubber([secret]).forms
    const text = Buffer.concat([
      Buffer.from([0xff, 0x00, 0xc3]),
      Buffer.from(`a ${secret} b ${encodeURIComponent(secret)} c ${secret}${secret}`),
      Buffer.from([0xfe]),
    ])
    const whole = new ByteScrubber(forms).push(text, true)
    expect(whole.toString('latin1')).toContain(`a ${SCRUBBED} b ${SCRUBBED} c ${SCRUBBED}${SCRUBBED}`)
    expect([...whole.subarray(0, 3)]).toEqual([0xff, 0x00, 0xc3])
    for (let cut = 1; cut < text.length; cut++) {
      const pieces = new ByteScrubber(forms)
      expect(Buffer.concat([pieces.push(text.subarray(0, cut)), pieces.push(text.subarray(cut)), pieces.push(new Uint8Array(0), true)]).equals(whole)).toBe(
        true,
      )
    }
  })

  it("a run's artifacts: a zip bomb is dropped in the worker, listed with why; the rest kept, scrubbed", async () => {
    const run = mkdtempSync(join(dir, 'run-'))
    mkdirSync(join(run, 'traces'))
    writeFileSync(join(run, 'traces', 'bomb.zip'), zipBomb(zlib, 1024, 'trace.trace'))
    writeFileSync(join(run, 'traces', 'good.zip'), zipSync({ 'trace.trace': strToU8('{"text":"hunter2-secret"}\n') }))
    writeFileSync(join(run, 'script.log'), 'logged hunter2-secret\n')
    const manifest = await finishArtifacts(run, scrub, 150_000_000)
    expect(manifest.files.map((f) => f.name).sort()).toEqual(['script.log', 'traces/good.zip'])
    expect(manifest.dropped).toEqual([
      {
        name: 'traces/bomb.zip',
        kind: 'trace',
        bytes: expect.any(Number),
        reason: 'an archive past the limits of unpacking is not kept: its entry trace.trace inflates to more than 200 times its compressed size (a zip bomb?)',
      },
    ])
    expect(existsSync(join(run, 'traces', 'bomb.zip'))).toBe(false)
    expect(readFileSync(join(run, 'script.log'), 'utf8')).toBe(`logged ${SCRUBBED}\n`)
    expect(strFromU8(unzipSync(readFileSync(join(run, 'traces', 'good.zip')))['trace.trace'])).toBe(`{"text":"${SCRUBBED}"}\n`)
  })
})
