/**
 * `monitors plan` and `apply` name the address where the local service shows a status page
 * that they create or change.
 */
import { describe, expect, it } from 'vitest'
import { monitors } from '../helpers/cli.js'
import { file, makeProject, useServer, writeFiles } from '../helpers/use-server.js'

const ctx = useServer('acc-web-plan')

const page = (name: string) =>
  file(
    `const checkout = new StatusPageService('checkout', { name: 'Checkout' })\n`,
    `new StatusPage('public', { name: ${JSON.stringify(name)}, url: 'shop-status', cards: [{ name: 'Shop', services: [checkout] }] })\n`,
  )

describe('status page address in plan and apply output', () => {
  it('names {server}/status/{url} under a created or changed page, and the page answers there', async () => {
    const dir = makeProject({ 'status.check.ts': page('Shop status') })
    const address = `${ctx.server.url}/status/shop-status`
    const plan = await ctx.cli(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(new RegExp(`\\+ status-page public .*\\n    # seen at ${address.replace(/[.]/g, '\\.')}\\n`))
    const apply = await ctx.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).toContain(`# seen at ${address}`)
    const html = await fetch(address)
    expect(html.status).toBe(200)
    expect(await html.text()).toContain('<title>Shop status status</title>')

    // nothing to do: no address; a change: the address again
    const same = await ctx.cli(dir, ['plan'])
    expect(same.output).not.toContain('# seen at')
    writeFiles(dir, { 'status.check.ts': page('Shop status, renamed') })
    const changed = await ctx.cli(dir, ['plan'])
    expect(changed.stdout).toMatch(new RegExp(`~ status-page public .*\\n    # seen at ${address.replace(/[.]/g, '\\.')}\\n`))
  })

  it('on the embedded server, the path to open once `monitors server` serves its database', async () => {
    const dir = makeProject({ 'status.check.ts': page('Local status') })
    const plan = await monitors(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('# seen at /status/shop-status (on `monitors server`)')
  })

  it("a StatusPage with showResponseTime applies it (the page shows response times), plans No changes after, and a wrong type is the loader's error naming the field", async () => {
    const timed = (value: string) =>
      file(
        `const search = new StatusPageService('search', { name: 'Search' })\n`,
        `new StatusPage('timed', { name: 'Timed', url: 'timed-status', showResponseTime: ${value}, cards: [{ name: 'Shop', services: [search] }] })\n`,
      )
    const dir = makeProject({ 'status.check.ts': timed('true') })
    const apply = await ctx.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    const summary = (await (await fetch(`${ctx.server.url}/status/timed-status/summary.json`)).json()) as any
    expect(summary.showResponseTime).toBe(true)
    expect(summary.cards[0].services[0].responseTime).toBeNull()
    expect(await (await fetch(`${ctx.server.url}/status/timed-status`)).text()).toContain('Response time: no runs in the last 24 hours')
    const same = await ctx.cli(dir, ['plan'])
    expect(same.code, same.output).toBe(0)
    expect(same.stdout).toContain('No changes.')

    writeFiles(dir, { 'status.check.ts': timed("'yes'") })
    const bad = await ctx.cli(dir, ['plan'])
    expect(bad.code).not.toBe(0)
    expect(bad.output).toMatch(/status\.check\.ts[^\n]*StatusPage "timed"[^\n]*showResponseTime/)
  })
})
