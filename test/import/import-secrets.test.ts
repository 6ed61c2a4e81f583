/**
 * Secrets never leave in clear (docs/security.md), seen from the CLI: a check's secret
 * environment variables, its webhooks' secret headers and query parameters and its Slack URL
 * are masked by the service, so `monitors import` writes a `process.env.NAME` reference for each
 * (never the value), says which variables to set, and records the values set while importing;
 * the next plan with them says `No changes.`, and one changed later is planned as
 * `(secret changed)`. Applied from code, they cause no perpetual diff. A webhook URL that is not
 * http(s) is refused before anything is sent, naming file › construct › field.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer } from '../helpers/use-server.js'
import { monitors } from '../helpers/cli.js'

const api = useServer('import-secrets')
const VALUES = ['var-secret-1111', 'env-secret-2222', 'hook-header-3333', 'hook-query-4444', 'slack-token-5555']

/** The CLI pointed at the server, with these environment variables set too. */
const cli = (dir: string, args: string[], extra: Record<string, string> = {}) =>
  monitors(dir, args, { MONITORING_API_URL: api.server.url, MONITORING_API_KEY: api.key, MONITORING_ACCOUNT_ID: 'import-secrets', ...extra })

const SET = {
  API_TOKEN: 'var-secret-1111',
  EDGE_PING_PING_TOKEN: 'env-secret-2222',
  EDGE_PING_OPS_X_HOOK_TOKEN: 'hook-header-3333',
  EDGE_PING_OPS_SIG: 'hook-query-4444',
  EDGE_PING_SLACK_URL: 'https://hooks.slack.com/services/T1/B2/slack-token-5555',
}

describe('monitors import of secrets', () => {
  const dir = makeProject({ 'keep.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })

  it('writes process.env references, never a value, says which variables to set; the next plan says No changes.', async () => {
    expect((await cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await api.client.post('/v1/variables', { key: 'API_TOKEN', value: 'var-secret-1111', secret: true })).status).toBe(201)
    const created = await api.client.post('/v1/checks/icmp', {
      name: 'Edge ping',
      heartbeat: {},
      script: '',
      request: { hostname: 'edge.example.com' },
      environmentVariables: [
        { key: 'PING_TOKEN', value: 'env-secret-2222', secret: true },
        { key: 'PLAIN', value: 'visible' },
      ],
      alertChannels: {
        webhook: [
          {
            name: 'ops',
            url: 'https://hooks.example.com/ops',
            headers: [{ key: 'X-Hook-Token', value: 'hook-header-3333', secret: true }],
            queryParameters: [{ key: 'sig', value: 'hook-query-4444', secret: true }],
          },
        ],
        slack: [{ url: 'https://hooks.slack.com/services/T1/B2/slack-token-5555' }],
      },
    })
    expect(created.status).toBe(201)

    const imported = await cli(dir, ['import', '--all', '--out', 'imported.check.ts'], SET)
    expect(imported.code, imported.output).toBe(0)
    expect(imported.output).not.toMatch(STACK_LINE)
    const code = readFileSync(join(dir, 'imported.check.ts'), 'utf8')
    for (const value of VALUES) expect(code).not.toContain(value)
    expect(code).toContain("new EnvVar('API_TOKEN', { value: process.env.API_TOKEN ?? '', secret: true })")
    expect(code).toContain("value: process.env.EDGE_PING_PING_TOKEN ?? ''")
    expect(code).toContain("{ key: 'PLAIN', value: 'visible', locked: false, secret: false }")
    expect(code).toContain("value: process.env.EDGE_PING_OPS_X_HOOK_TOKEN ?? ''")
    expect(code).toContain("value: process.env.EDGE_PING_OPS_SIG ?? ''")
    expect(code).toContain("url: process.env.EDGE_PING_SLACK_URL ?? ''")
    // the output names every variable, where it goes, and that the values set were taken
    for (const name of Object.keys(SET)) expect(imported.stderr).toMatch(new RegExp(`^  ${name} +\\S+ \\S+ › .*\\(set: taken as the service's value\\)$`, 'm'))
    expect(imported.stderr).toMatch(/EDGE_PING_OPS_X_HOOK_TOKEN +icmp-check edge-ping › alertChannels\.webhook\[ops\]\.headers\[X-Hook-Token\]\.value/)
    expect(imported.stderr).toContain('the next plan with the same values says "No changes"')
    for (const value of VALUES) expect(imported.output).not.toContain(value)
    const lockText = api.lockText(dir)
    for (const value of VALUES) expect(lockText).not.toContain(value)

    const plan = await cli(dir, ['plan', '--detailed-exitcode'], SET)
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })

  it('a secret changed in the environment after the import is planned as (secret changed), never shown', async () => {
    const plan = await cli(dir, ['plan', '--detailed-exitcode'], { ...SET, API_TOKEN: 'rotated-6666', EDGE_PING_OPS_SIG: 'rotated-7777' })
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toMatch(/~ variable API_TOKEN[\s\S]*value: \(secret changed\)/)
    expect(plan.stdout).toMatch(/~ icmp-check edge-ping[\s\S]*\(secret changed\)/)
    expect(plan.output).not.toMatch(/rotated-|var-secret|hook-query/)
  })

  it('variables not set while importing are named as not set', async () => {
    expect((await api.client.post('/v1/variables', { key: 'OTHER_TOKEN', value: 'other-secret-8888', secret: true })).status).toBe(201)
    // the first import's variables stay set (its file reads them); OTHER_TOKEN is not
    const imported = await cli(dir, ['import', '--all', '--out', 'other.check.ts'], SET)
    expect(imported.code, imported.output).toBe(0)
    expect(imported.stderr).toMatch(/^ {2}OTHER_TOKEN +variable OTHER_TOKEN › value {2}\(not set\)$/m)
    expect(imported.stderr).toContain(
      "the next plan changes this imported resource, and its apply sends the code's values:\n  ~ variable OTHER_TOKEN › value (secret changed)\n",
    )
    expect(readFileSync(join(dir, 'other.check.ts'), 'utf8')).not.toContain('other-secret-8888')
  })
})

describe('monitors import in a project with a config and no check file yet', () => {
  /** The lines of the import's summary that name what the next plan changes (`  ~ kind id › fields`). */
  const summaryChanges = (stderr: string) => {
    const at = stderr.indexOf('the next plan changes')
    if (at < 0) return []
    return stderr
      .slice(at)
      .split('\n')
      .slice(1)
      .filter((l) => /^ {2}[~+-]/.test(l))
  }
  /** The same lines made from the plan's JSON document. */
  const planChanges = (
    doc: { changes: Array<{ action: string; kind: string; logicalId: string; fieldDiffs: Array<{ path: string; secret?: boolean; new?: unknown }> }> },
    keys: string[],
  ) =>
    doc.changes
      .filter((c) => keys.includes(`${c.kind}:${c.logicalId}`))
      .map((c) => {
        const fields = c.fieldDiffs.map((d) => (d.secret && typeof d.new === 'string' ? `${d.path} ${d.new}` : d.path))
        return `  ${c.action === 'create' ? '+' : c.action === 'delete' ? '-' : '~'} ${c.kind} ${c.logicalId}${fields.length > 0 ? ` › ${fields.join(', ')}` : ''}`
      })

  it('writes the first check file where checkMatch finds it; its summary promises exactly what the next plan does (secrets not set)', async () => {
    const dir = makeProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'first', checkMatch: 'checks/**/*.check.ts' })\n`,
    })
    expect((await api.client.post('/v1/variables', { key: 'FIRST_TOKEN', value: 'first-secret-1111', secret: true })).status).toBe(201)
    const hook = await api.client.post<{ id: number }>('/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'first-hook', url: 'https://hooks.example.com/first', headers: [{ key: 'X-First', value: 'first-header-2222', secret: true }] },
    })
    expect(hook.status).toBe(201)
    const check = await api.client.post<{ id: string }>('/v1/checks/icmp', {
      name: 'First ping',
      heartbeat: {},
      script: '',
      request: { hostname: 'first.example.com' },
      environmentVariables: [{ key: 'FIRST_ENV', value: 'first-env-3333', secret: true }],
    })
    expect(check.status).toBe(201)
    const wanted = ['variable:FIRST_TOKEN', `webhook-alert-channel:${hook.body.id}`, `icmp-check:${check.body.id}`]

    const imported = await cli(dir, ['import', ...wanted])
    expect(imported.code, imported.output).toBe(0)
    expect(imported.stdout).toContain('Wrote 3 constructs to checks/imported.check.ts and recorded them in the lock.')
    expect(imported.stderr).toMatch(/^ {2}FIRST_TOKEN +variable FIRST_TOKEN › value {2}\(not set\)$/m)
    const keys = Object.keys(JSON.parse(api.lockText(dir)).resources)
    expect(keys).toHaveLength(3)

    const plan = await cli(dir, ['plan', '--format', 'json'])
    expect(plan.code, plan.output).toBe(0)
    const promised = summaryChanges(imported.stderr)
    // the variable's empty secret is a change (no fingerprint to compare); a channel's or a check's empty secret is not compared
    expect(promised).toEqual(['  ~ variable FIRST_TOKEN › value (secret changed)'])
    expect(planChanges(JSON.parse(plan.stdout), keys)).toEqual(promised)
    expect(imported.output).not.toMatch(/first-(secret|header|env)-/)
  })

  it('says the next plan refuses the imported code, with the problems that plan names, when a required secret is not set', async () => {
    const dir = makeProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'slack' })\n`,
    })
    const slack = await api.client.post<{ id: number }>('/v1/alert-channels', {
      type: 'SLACK',
      config: { url: 'https://hooks.slack.com/services/T7/B7/first-slack-4444' },
    })
    expect(slack.status).toBe(201)
    const imported = await cli(dir, ['import', `slack-alert-channel:${slack.body.id}`])
    expect(imported.code, imported.output).toBe(0)
    expect(imported.stdout).toContain('to imported.check.ts and recorded them in the lock.')
    expect(imported.stderr).toContain('the next plan refuses the imported code:')
    expect(imported.stderr).not.toContain('(secret changed)')
    const problems = imported.stderr
      .split('\n')
      .filter((l) => l.startsWith('  ✖ '))
      .map((l) => l.slice(4))
    expect(problems.length).toBeGreaterThan(0)
    const plan = await cli(dir, ['plan'])
    expect(plan.code).toBe(1)
    for (const problem of problems) expect(plan.stderr).toContain(`✖ ${problem}`)
    expect(plan.stderr.split('\n').filter((l) => l.startsWith('✖ '))).toHaveLength(problems.length)
  })
})

describe('secrets of checks applied from code', () => {
  const check = (token: string, hook: string) => `import { IcmpCheck } from 'monitors-as-code'
new IcmpCheck('coded', {
  name: 'Coded ping',
  request: { hostname: 'coded.example.com' },
  environmentVariables: [{ key: 'TOKEN', value: '${token}', secret: true }],
  alertChannels: {
    webhook: [{ name: 'ops', url: 'https://hooks.example.com/ops', headers: [{ key: 'X-Hook-Token', value: '${hook}', secret: true }] }],
    slack: [{ url: 'https://hooks.slack.com/services/T9/B9/coded-slack-9999' }],
  },
})
`

  it('apply then plan says No changes. (no perpetual diff); a changed secret is (secret changed); nothing in clear', async () => {
    const dir = makeProject({ 'coded.check.ts': check('coded-env-1111', 'coded-hook-2222') })
    const applied = await cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const plan = await cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
    const lockText = api.lockText(dir)
    expect(lockText).not.toMatch(/coded-env-1111|coded-hook-2222|coded-slack-9999/)

    writeFileSync(join(dir, 'coded.check.ts'), check('coded-env-1111', 'coded-hook-rotated'))
    const again = await cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(2)
    // one fingerprint covers the check's secrets: the plan names them together
    expect(again.stdout).toContain(
      '(secret changed): one of alertChannels.slack[0].url, alertChannels.webhook[ops].headers[X-Hook-Token].value, environmentVariables[TOKEN].value',
    )
    expect(again.output).not.toMatch(/coded-env-1111|coded-hook|coded-slack-9999/)
    const reapplied = await cli(dir, ['apply', '--yes'])
    expect(reapplied.code, reapplied.output).toBe(0)
    expect((await cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('a webhook URL that is not http(s) is refused before anything is sent, naming file › construct › field', async () => {
    const dir = makeProject({
      'bad.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('bad-hook', { name: 'Bad hook', request: { query: 'example.com' }, alertChannels: { webhook: [{ name: 'x', url: 'file:///etc/passwd' }] } })\n`,
    })
    const before = api.server.requestCount()
    const plan = await cli(dir, ['plan'])
    expect(plan.code).toBe(1)
    expect(plan.stderr).toMatch(/bad\.check\.ts(:\d+:\d+)? › DnsCheck "bad-hook" › alertChannels\.webhook\.0\.url: must be an http:\/\/ or https:\/\/ URL/)
    expect(plan.output).not.toMatch(STACK_LINE)
    expect(api.server.requestCount()).toBe(before)
  })
})
