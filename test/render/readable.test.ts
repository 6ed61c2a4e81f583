/**
 * A plan a reviewer can read, against the real local server: nested blocks, creates cut down to
 * what a reviewer needs, references by construct, partial and refresh-only plans said as such,
 * locked values masked everywhere a value can appear, markdown summaries escaped for HTML only.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { file, makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('render')

const services = `const payments = new StatusPageService('payments', { name: 'Payments API' })
const webhooks = new StatusPageService('webhooks', { name: 'Webhook delivery' })
`
const check = (serviceVar: string, frequency = 5) => `new DnsCheck('shop-dns', {
  name: 'Shop | DNS_main',
  frequency: ${frequency},
  request: { query: 'shop.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
  triggerIncident: { serviceId: ${serviceVar}, severity: 'MAJOR', name: 'Shop down', description: 'DNS fails' },
})
`
const page = `new StatusPage('public', { name: 'Shop status', url: 'shop-status-render', cards: [{ name: 'Shop', services: [payments, webhooks] }] })
`
const locked = (value: string) => `new EnvVar('PARTNER_API_KEY', { value: '${value}', locked: true })
`
const project = (serviceVar: string, lockedValue: string, frequency = 5) => file(services, check(serviceVar, frequency), page, locked(lockedValue))

type Change = { logicalId: string; fieldDiffs: Array<{ path: string; old?: unknown; new?: unknown }> }

describe('a plan a reviewer can read', () => {
  const dir = makeProject({ 'shop.check.ts': project('payments', 'locked-value-one') })
  const checkId = () => api.lock(dir).resources['dns-check:shop-dns'].remoteId as string

  it('prints a create as nested blocks with what the code sets and the defaults a reviewer needs', async () => {
    const text = await api.cli(dir, ['plan'])
    expect(text.code, text.output).toBe(0)
    // nested objects and arrays of objects are blocks, one field a line
    expect(text.stdout).toContain(
      [
        '    + request {',
        '    +   query: "shop.example.com"',
        '    +   recordType: "A"',
        '    +   assertions [',
        '    +     {',
        '    +       source: "RESPONSE_CODE"',
      ].join('\n'),
    )
    expect(text.stdout).toContain('    + alertSettings {\n    +   runBasedEscalation {\n    +     failedRunThreshold: 2\n        }\n      }')
    expect(text.stdout).not.toMatch(/\{"/)
    // the defaults a reviewer needs stay; the rest is counted, not listed
    expect(text.stdout).toContain('    + frequency: 5')
    expect(text.stdout).toContain('    + degradedResponseTime: 500')
    expect(text.stdout).toContain('    + maxResponseTime: 1000')
    expect(text.stdout).not.toContain('checkType')
    expect(text.stdout).not.toContain('doubleCheck')
    expect(text.stdout).not.toContain('shouldFail')
    expect(text.stdout).toMatch(/# 1\d fields at their defaults not shown \(plan --verbose shows every field\)/)
    // references name the construct; cards list services by name
    expect(text.stdout).toContain('+   serviceId: status-page-service:payments "Payments API" (known after apply)')
    expect(text.stdout).toContain(
      '    +     services [\n    +       status-page-service:payments "Payments API" (known after apply)\n    +       status-page-service:webhooks "Webhook delivery" (known after apply)\n          ]',
    )
    expect(text.output).not.toContain('locked-value-one')
    expect(text.stdout).toContain('    + value: (locked)')
    expect(text.output).not.toMatch(STACK_LINE)
  })

  it('plan --verbose and the JSON document keep every field', async () => {
    const verbose = await api.cli(dir, ['plan', '--verbose'])
    expect(verbose.code, verbose.output).toBe(0)
    expect(verbose.stdout).toContain('    + checkType: "DNS"')
    expect(verbose.stdout).toContain('    + doubleCheck: true')
    expect(verbose.stdout).not.toContain('not shown')
    const doc = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    const dns = doc.changes.find((c: Change) => c.logicalId === 'shop-dns')
    expect(dns.fieldDiffs).toContainEqual({ path: 'checkType', new: 'DNS' })
    expect(dns.fieldDiffs).toContainEqual({ path: 'doubleCheck', new: true })
    expect(dns.fieldDiffs).toContainEqual({ path: 'triggerIncident', new: expect.objectContaining({ serviceId: 'status-page-service:payments' }) })
    expect(doc.references['status-page-service:payments']).toEqual({ kind: 'status-page-service', logicalId: 'payments', name: 'Payments API' })
  })

  it('markdown: a diff code block per change, <summary> escaped for HTML only, no locked value', async () => {
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(md.code, md.output).toBe(0)
    expect(md.stdout).toContain('<summary><code>+ variable PARTNER_API_KEY</code> create PARTNER_API_KEY</summary>')
    expect(md.stdout).toContain('<summary><code>+ dns-check shop-dns</code> create Shop | DNS_main</summary>')
    expect(md.stdout).not.toContain('\\_')
    expect(md.stdout).not.toContain('&\\#')
    expect(md.stdout).toContain('```diff\n+ name: "Shop | DNS_main"\n+ alertSettings {\n+   runBasedEscalation {\n+     failedRunThreshold: 2\n    }\n  }\n')
    expect(md.stdout).toContain('+   serviceId: status-page-service:payments "Payments API" (known after apply)')
    expect(md.stdout).toContain('+ value: (locked)')
    expect(md.stdout).not.toContain('locked-value-one')
    expect(md.stdout.match(/```diff/g)?.length).toBe(5)
  })

  it('an update names the referenced constructs and masks a changed locked value in every format', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    writeFiles(dir, { 'shop.check.ts': project('webhooks', 'locked-value-two') })

    const text = await api.cli(dir, ['plan'])
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toContain('~ triggerIncident.serviceId: status-page-service:payments "Payments API" → status-page-service:webhooks "Webhook delivery"')
    expect(text.stdout).toContain('~ value: (locked value changed)')
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(md.stdout).toContain('~ triggerIncident.serviceId: status-page-service:payments "Payments API" → status-page-service:webhooks "Webhook delivery"')
    expect(md.stdout).toContain('~ value: (locked value changed)')
    const json = await api.cli(dir, ['plan', '--format', 'json'])
    const doc = JSON.parse(json.stdout)
    expect(doc.changes.find((c: Change) => c.logicalId === 'PARTNER_API_KEY').fieldDiffs).toEqual([{ path: 'value', new: '(locked value changed)' }])
    const serviceDiff = doc.changes.find((c: Change) => c.logicalId === 'shop-dns').fieldDiffs[0]
    expect(doc.references[serviceDiff.old]).toMatchObject({ logicalId: 'payments', name: 'Payments API' })
    expect(doc.references[serviceDiff.new]).toMatchObject({ logicalId: 'webhooks', name: 'Webhook delivery' })

    const saved = await api.cli(dir, ['plan', '--out', 'plan.json'])
    expect(saved.code, saved.output).toBe(0)
    for (const output of [text.output, md.output, json.output, saved.output, readFileSync(join(dir, 'plan.json'), 'utf8')]) {
      expect(output).not.toContain('locked-value-one')
      expect(output).not.toContain('locked-value-two')
    }
    // the change is still applied, from the saved plan too
    const apply = await api.cli(dir, ['apply', 'plan.json'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).not.toContain('locked-value-two')
    expect((await api.client.get<{ value: string }>('/v1/variables/PARTNER_API_KEY')).body.value).toBe('locked-value-two')
  })

  it('a targeted plan says it is partial, in every format', async () => {
    writeFiles(dir, { 'shop.check.ts': project('webhooks', 'locked-value-two', 10) })
    const text = await api.cli(dir, ['plan', '--target', 'dns-check:shop-dns'])
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toContain('This plan is partial: only dns-check:shop-dns and what it depends on (--target).')
    const md = await api.cli(dir, ['plan', '--target', 'DnsCheck:shop-dns', '--format', 'markdown'])
    expect(md.stdout).toContain('> **This plan is partial:** only dns-check:shop-dns and what it depends on (--target).')
    const doc = JSON.parse((await api.cli(dir, ['plan', '--target', 'dns-check:shop-dns', '--format', 'json'])).stdout)
    expect(doc.targets).toEqual(['dns-check:shop-dns'])
    const full = await api.cli(dir, ['plan'])
    expect(full.stdout).not.toContain('partial')
    expect(JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout).targets).toBeUndefined()
  })

  it('--refresh-only shows drift as last applied → now remote', async () => {
    writeFiles(dir, { 'shop.check.ts': project('webhooks', 'locked-value-two') })
    const current = (await api.client.get<Record<string, unknown>>(`/v1/checks/${checkId()}`)).body
    for (const key of ['id', 'created_at', 'updated_at', 'checkType']) delete current[key]
    await api.client.put(`/v1/checks/dns/${checkId()}`, { ...current, frequency: 30, tags: ['edited'] })

    const refresh = await api.cli(dir, ['plan', '--refresh-only'])
    expect(refresh.code, refresh.output).toBe(0)
    expect(refresh.stdout).toMatch(
      /# changed outside monitors since the last apply; values read last applied → now remote \(apply reverts them\)\n\s+~ frequency: 5 → 30/,
    )
    const md = await api.cli(dir, ['plan', '--refresh-only', '--format', 'markdown'])
    expect(md.stdout).toContain('~ frequency: 5 → 30')
    expect(md.stdout).toContain('~ tags: [] → ["edited"]')
    expect(md.stdout).toContain('last applied → now remote')
    const doc = JSON.parse((await api.cli(dir, ['plan', '--refresh-only', '--format', 'json'])).stdout)
    expect(doc.refreshOnly).toBe(true)
    // a plain plan still reads remote → code: what apply will do
    const plan = await api.cli(dir, ['plan'])
    expect(plan.stdout).toContain('~ frequency: 30 → 5')
    expect(plan.stdout).toContain('values read remote → code')
  })
})
