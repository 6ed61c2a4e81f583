import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { createScrubber, refusal, SCRUBBED, secretForms } from '../../../src/runner/script/index.js'

describe('scrubbing secrets', () => {
  const secret = 'hunter2/+=?&ü'
  const scrub = createScrubber([secret, ''])

  it('replaces a secret and its URL-encoded, JSON-escaped and base64 forms', () => {
    const basic = Buffer.from(`admin:${secret}`).toString('base64')
    const text = [secret, encodeURIComponent(secret), encodeURI(secret), JSON.stringify({ s: secret }), `Basic ${basic}`, Buffer.from(secret).toString('base64url')].join(' | ')
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
      'trace.network': strToU8(`${JSON.stringify({ snapshot: { request: { url: `https://x/?t=${encodeURIComponent(secret)}`, headers: [{ name: 'Authorization', value: 'Bearer not-a-declared-secret' }, { name: 'Accept', value: '*/*' }] } } })}\n`),
      'trace.trace': strToU8(`${JSON.stringify({ params: { headers: { authorization: 'Basic abc' }, text: secret } })}\nnot json ${secret}\n`),
      [`resources/${secret.slice(0, 7)}.html`]: strToU8(`<p>${secret}</p>`),
      'resources/shot.png': png,
    })
    const out = unzipSync(scrub.zip(zip))
    expect(Object.keys(out).sort()).toEqual(['resources/hunter2.html', 'resources/shot.png', 'trace.network', 'trace.trace'].sort())
    const network = JSON.parse(strFromU8(out['trace.network']).trim())
    expect(network.snapshot.request.headers).toEqual([{ name: 'Authorization', value: SCRUBBED }, { name: 'Accept', value: '*/*' }])
    expect(network.snapshot.request.url).toBe(`https://x/?t=${SCRUBBED}`)
    expect(strFromU8(out['trace.trace'])).toBe(`${JSON.stringify({ params: { headers: { authorization: SCRUBBED }, text: SCRUBBED } })}\nnot json ${SCRUBBED}\n`)
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
    const out = strFromU8(unzipSync(createScrubber([]).zip(zip))['trace.trace'])
    expect(out).not.toMatch(/zzz/)
    expect(out).toContain(`"message":"proxy-authorization: ${SCRUBBED}\\nAccept: */*"`)
  })
})

describe('the browser proxy', () => {
  it('refuses what would reach the server\'s files, and forwards the rest', () => {
    expect(refusal({ method: 'goto', params: { url: 'file:///etc/passwd' } })).toMatch(/^navigation to file:\/\/\/etc\/passwd refused/)
    expect(refusal({ method: 'goto', params: { url: ' FILE:///x' } })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'view-source:file:///x' } })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'chrome://settings' } })).not.toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { localPaths: ['/etc/passwd'] } })).not.toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { localDirectory: '/srv' } })).not.toBeNull()
    for (const method of ['newCDPSession', 'newBrowserCDPSession', 'saveAs', 'startServer', 'launch', 'connectOverCDP']) expect(refusal({ method })).not.toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'https://example.test/' } })).toBeNull()
    expect(refusal({ method: 'goto', params: { url: 'about:blank' } })).toBeNull()
    expect(refusal({ method: 'setInputFiles', params: { payloads: [{ name: 'a.txt', buffer: '' }] } })).toBeNull()
    expect(refusal({ method: 'click', params: { selector: 'a' } })).toBeNull()
  })
})
