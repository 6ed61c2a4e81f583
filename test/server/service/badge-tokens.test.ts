/**
 * Public badges on the real server (both stores): a check's token made, read, rotated and
 * revoked with the account's key; GET /badges/{token}.svg without a key answers the badge the
 * keyed route draws, with the same query options; a revoked or rotated-away token answers
 * exactly as an unknown one; another account's check is a missing one.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSvg } from '../../helpers/svg.js'
import { KEY_B, caller, expect400, type Answer } from '../helpers.js'
import { startResultsBench, type ResultsBench } from '../results/results-helpers.js'

let bench: ResultsBench
const anonymous = () => caller(bench.server, null)

beforeAll(async () => {
  bench = await startResultsBench()
})
afterAll(async () => {
  await bench.close()
})

const title = (answer: Answer) => parseSvg(answer.text).texts.title[0].toLowerCase()

/** what a client can tell of an answer: status, content type, body */
const seen = (answer: Answer) => ({ status: answer.status, type: answer.headers.get('content-type'), body: answer.text })

describe('public badges', () => {
  it("a check's token gives a badge without a key, the same as the keyed route with the same options; asking again gives the same token", async () => {
    const id = await bench.createCheck('public-badge.example.test', { name: 'Public <badge>' })
    expect((await bench.call('GET', `/v1/badges/checks/${id}/token`)).status).toBe(404)
    const made = await bench.call('POST', `/v1/badges/checks/${id}/token`)
    expect(made.status, made.text).toBe(201)
    expect(made.json).toMatchObject({
      checkId: id,
      subjectKind: 'check',
      path: `/badges/${made.json.token}.svg`,
      url: `${bench.server.url}/badges/${made.json.token}.svg`,
    })
    expect(made.json.token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const again = await bench.call('POST', `/v1/badges/checks/${id}/token`)
    expect(again.status).toBe(200)
    expect(again.json.token).toBe(made.json.token)
    expect((await bench.call('GET', `/v1/badges/checks/${id}/token`)).json).toEqual(made.json)
    expect((await bench.call('GET', '/v1/badges/tokens')).json).toContainEqual(made.json)

    const badge = await anonymous()('GET', made.json.path)
    expect(badge.status).toBe(200)
    expect(badge.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
    expect(badge.headers.get('access-control-allow-origin')).toBe('*')
    expect(title(badge)).toBe('public <badge>: unknown')

    bench.dns.set('public-badge.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    expect((await bench.runAndRecord(id)).result.status).toBe('PASSED')
    for (const query of ['', '?style=for-the-badge', '?style=social&theme=dark', '?responseTime=true']) {
      const open = await anonymous()('GET', `${made.json.path}${query}`)
      const keyed = await bench.call('GET', `/v1/badges/checks/${id}${query}`)
      expect(open.status).toBe(200)
      expect(open.text).toBe(keyed.text)
    }
    expect(title(await anonymous()('GET', made.json.path))).toBe('public <badge>: passing')
    // the query is checked as the keyed route checks it
    expect(expect400(await anonymous()('GET', `${made.json.path}?style=shiny`), 'query')).toEqual(['style'])
  })

  it('rotating makes a new token and the old one answers 404; a revoked token answers exactly as an unknown one', async () => {
    const id = await bench.createCheck('rotate-badge.example.test', { name: 'Rotate' })
    const first = (await bench.call('POST', `/v1/badges/checks/${id}/token`)).json
    const rotated = await bench.call('POST', `/v1/badges/checks/${id}/token/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.json.token).not.toBe(first.token)
    expect((await anonymous()('GET', rotated.json.path)).status).toBe(200)
    const unknown = seen(await anonymous()('GET', `/badges/${'A'.repeat(32)}.svg`))
    expect(unknown.status).toBe(404)
    expect(seen(await anonymous()('GET', first.path))).toEqual(unknown)

    expect((await bench.call('DELETE', `/v1/badges/checks/${id}/token`)).status).toBe(204)
    expect(seen(await anonymous()('GET', rotated.json.path))).toEqual(unknown)
    expect((await bench.call('GET', `/v1/badges/checks/${id}/token`)).json.message).toBe('Badge token not found')
    expect((await bench.call('DELETE', `/v1/badges/checks/${id}/token`)).status).toBe(404)
    // malformed addresses are unknown tokens too
    for (const path of ['/badges/short.svg', `/badges/${rotated.json.token}`, `/badges/${rotated.json.token}.png`])
      expect(seen(await anonymous()('GET', path))).toEqual(unknown)
    // a new token after a revocation is a new one
    const after = await bench.call('POST', `/v1/badges/checks/${id}/token`)
    expect(after.status).toBe(201)
    expect([first.token, rotated.json.token]).not.toContain(after.json.token)
  })

  it("another account's check is a missing one on every token route; deleting the check ends its token", async () => {
    const id = await bench.createCheck('tenant-badge.example.test', { name: 'Tenant' })
    const token = (await bench.call('POST', `/v1/badges/checks/${id}/token`)).json
    const other = caller(bench.server, KEY_B)
    const missing = randomUUID()
    for (const [method, path] of [
      ['GET', '/token'],
      ['POST', '/token'],
      ['POST', '/token/rotate'],
      ['DELETE', '/token'],
    ] as const) {
      const theirs = await other(method, `/v1/badges/checks/${id}${path}`)
      const none = await other(method, `/v1/badges/checks/${missing}${path}`)
      expect(theirs.status).toBe(404)
      expect(theirs.json).toEqual({ ...none.json })
    }
    expect((await other('GET', '/v1/badges/tokens')).json).not.toContainEqual(expect.objectContaining({ checkId: id }))
    // still A's, unchanged
    expect((await anonymous()('GET', token.path)).status).toBe(200)
    expect((await bench.call('GET', `/v1/badges/checks/${id}/token`)).json.token).toBe(token.token)
    // a key is needed to manage tokens
    expect((await anonymous()('POST', `/v1/badges/checks/${id}/token/rotate`)).status).toBe(401)

    expect((await bench.call('DELETE', `/v1/checks/${id}`)).status).toBe(204)
    expect((await anonymous()('GET', token.path)).status).toBe(404)
    expect((await bench.call('GET', '/v1/badges/tokens')).json).not.toContainEqual(expect.objectContaining({ checkId: id }))
  })
})

describe('public badges of check groups', () => {
  async function group(name: string, call = bench.call): Promise<number> {
    const answer = await call('POST', '/v1/check-groups', { name, locations: ['eu-west-1'] })
    expect(answer.status, answer.text).toBe(201)
    return answer.json.id
  }

  it("a group's token gives its badge without a key (its checks' worst state), the same as the keyed group route; asking again gives the same token", async () => {
    const id = await group('Public <group>')
    const member = await bench.createCheck('group-badge.example.test', { name: 'Member', groupId: id })
    expect((await bench.call('GET', `/v1/badges/groups/${id}/token`)).status).toBe(404)
    const made = await bench.call('POST', `/v1/badges/groups/${id}/token`)
    expect(made.status, made.text).toBe(201)
    expect(made.json).toMatchObject({
      groupId: id,
      subjectKind: 'group',
      path: `/badges/${made.json.token}.svg`,
      url: `${bench.server.url}/badges/${made.json.token}.svg`,
    })
    expect(made.json.checkId).toBeUndefined()
    expect(made.json.token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const again = await bench.call('POST', `/v1/badges/groups/${id}/token`)
    expect([again.status, again.json.token]).toEqual([200, made.json.token])
    expect((await bench.call('GET', `/v1/badges/groups/${id}/token`)).json).toEqual(made.json)
    expect((await bench.call('GET', '/v1/badges/tokens')).json).toContainEqual(made.json)

    bench.dns.set('group-badge.example.test', 'A', { rcode: 'SERVFAIL' })
    expect((await bench.runAndRecord(member)).result.status).toBe('FAILED')
    for (const query of ['', '?style=for-the-badge', '?theme=dark', '?responseTime=true']) {
      const open = await anonymous()('GET', `${made.json.path}${query}`)
      const keyed = await bench.call('GET', `/v1/badges/groups/${id}${query}`)
      expect(open.status).toBe(200)
      expect(open.headers.get('access-control-allow-origin')).toBe('*')
      expect(open.text).toBe(keyed.text)
    }
    expect(title(await anonymous()('GET', made.json.path))).toBe('public <group>: failing')
  })

  it("rotate, revoke, another account's group and deleting the group answer as for a check", async () => {
    const id = await group('Rotate group')
    const first = (await bench.call('POST', `/v1/badges/groups/${id}/token`)).json
    const rotated = await bench.call('POST', `/v1/badges/groups/${id}/token/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.json.token).not.toBe(first.token)
    const unknown = seen(await anonymous()('GET', `/badges/${'B'.repeat(32)}.svg`))
    expect(seen(await anonymous()('GET', first.path))).toEqual(unknown)
    expect((await anonymous()('GET', rotated.json.path)).status).toBe(200)

    const other = caller(bench.server, KEY_B)
    const theirsMissing = 999_999_999
    for (const [method, path] of [
      ['GET', '/token'],
      ['POST', '/token'],
      ['POST', '/token/rotate'],
      ['DELETE', '/token'],
    ] as const) {
      const theirs = await other(method, `/v1/badges/groups/${id}${path}`)
      const none = await other(method, `/v1/badges/groups/${theirsMissing}${path}`)
      expect(theirs.status).toBe(404)
      expect(theirs.json).toEqual(none.json)
      expect((await other(method, `/v1/badges/groups/not-a-number${path}`)).json).toEqual(none.json)
    }
    expect((await other('GET', '/v1/badges/tokens')).json).not.toContainEqual(expect.objectContaining({ groupId: id }))
    expect((await bench.call('GET', `/v1/badges/groups/${id}/token`)).json.token).toBe(rotated.json.token)

    expect((await bench.call('DELETE', `/v1/badges/groups/${id}/token`)).status).toBe(204)
    expect(seen(await anonymous()('GET', rotated.json.path))).toEqual(unknown)
    expect((await bench.call('DELETE', `/v1/badges/groups/${id}/token`)).status).toBe(404)

    // deleting the group ends its token
    const last = (await bench.call('POST', `/v1/badges/groups/${id}/token`)).json
    expect((await anonymous()('GET', last.path)).status).toBe(200)
    expect((await bench.call('DELETE', `/v1/check-groups/${id}`)).status).toBe(204)
    expect(seen(await anonymous()('GET', last.path))).toEqual(unknown)
    expect((await bench.call('GET', '/v1/badges/tokens')).json).not.toContainEqual(expect.objectContaining({ groupId: id }))
  })
})
