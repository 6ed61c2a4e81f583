import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatProblem, loadProject, ProjectError } from '../../src/project/index.js'
import { FIXTURES, tempProject } from './helpers.js'

/** Loads a project that must fail; returns the error's lines (problems, then the count). */
async function failingLines(options: { cwd: string; config?: string }): Promise<string[]> {
  const error = await loadProject(options).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ProjectError)
  const projectError = error as ProjectError
  expect(projectError.userError).toBe(true)
  const lines = projectError.message.split('\n')
  expect(lines.at(-1)).toBe(`${projectError.problems.length} problem${projectError.problems.length === 1 ? '' : 's'} found; nothing was sent.`)
  expect(lines.slice(0, -1)).toEqual(projectError.problems.map(formatProblem))
  expect(projectError.message).not.toMatch(/\n\s+at /) // no stack
  return lines.slice(0, -1)
}

const fixture = (name: string) => path.join(FIXTURES, name)

describe('problems are reported as file › construct › field: message', () => {
  it('formats a problem', () => {
    expect(
      formatProblem({
        file: 'shop.check.ts',
        construct: 'DnsCheck',
        logicalId: 'shop-dns',
        field: 'frequencyOffset',
        message: 'must be 1-20 when frequency is 2 (got 25)',
      }),
    ).toBe('shop.check.ts › DnsCheck "shop-dns" › frequencyOffset: must be 1-20 when frequency is 2 (got 25)')
    expect(formatProblem({ file: 'a.check.ts', line: 3, column: 7, message: 'syntax error: Unexpected token' })).toBe(
      'a.check.ts:3:7 › syntax error: Unexpected token',
    )
    expect(formatProblem({ file: '', message: 'no config' })).toBe('no config')
  })

  it('reports every schema violation of every construct at once', async () => {
    const lines = await failingLines({ cwd: fixture('invalid') })
    expect(lines).toEqual([
      'shop.check.ts › DnsCheck "shop-dns" › frequencyOffset: must be 1-20 when frequency is 2 (got 25)',
      'shop.check.ts › DnsCheck "typo" › request.recordTyp: is not a known field (did you mean recordType?)',
      'shop.check.ts › DnsCheck "typo" › frequncy: is not a known field (did you mean frequency?)',
      'shop.check.ts › DnsCheck "types" › name: must be a string (got number)',
      'shop.check.ts › DnsCheck "types" › activated: must be a boolean (got string)',
      expect.stringMatching(/^shop\.check\.ts › DnsCheck "types" › locations\.0: must be one of us-east-1, .*\(got "mars-1"\)$/),
      'shop.check.ts › DnsCheck "no-props" › props must be an object (got undefined): new DnsCheck("no-props", { ... })',
      'shop.check.ts › IcmpCheck "zero" › frequency: must not be 0: sub-minute frequencies are only for API and TCP checks (allowed: 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440)',
      'shop.check.ts › IcmpCheck "zero" › request.pingCount: must be at most 50 (got 99)',
      'shop.check.ts › IcmpCheck "slow" › frequencyOffset: must be 1-2 when frequency is 120 (got 3)',
      'shop.check.ts › EnvVar "SECRET_THING" › value: must be a string (got number)',
      'shop.check.ts › EnvVar "SECRET_THING" › secret: must be a boolean (got string)',
      "shop.check.ts › StatusPage \"page\" › cards.0.services.0: must be a StatusPageService construct of this project, e.g. const checkout = new StatusPageService('checkout', { name: 'Checkout' }) (got a plain object)",
      'shop.check.ts › StatusPage "page" › url: must be a lower-case slug of a-z, 0-9 and -, 1-63 characters, not starting or ending with -',
      'shop.check.ts › MaintenanceWindow "mw" › endsAt: must be after startsAt (2026-02-01T00:00:00Z)',
      'shop.check.ts › MaintenanceWindow "mw" › repeatUnit: is required when repeatInterval is set (DAY, WEEK or MONTH)',
      'shop.check.ts › DnsCheck "opts" › aliases: must be an array of logical ids (got string)',
      'shop.check.ts › DnsCheck "opts" › protect: must be a boolean (got string)',
    ])
  })

  it('lists only the frequencies a DNS or ICMP check allows (no 0), and 0 for an API check', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck\nimport { ApiCheck, DnsCheck, IcmpCheck } from 'monitors-as-code'
new DnsCheck('three', { name: 'D', request: { query: 'a.example.com' }, frequency: 3 })
new IcmpCheck('seven', { name: 'I', request: { hostname: 'a.example.com' }, frequency: 7 })
new ApiCheck('four', { name: 'A', request: { method: 'GET', url: 'https://a.example.com' }, frequency: 4 })
`,
    })
    expect(await failingLines({ cwd: dir })).toEqual([
      'a.check.ts › DnsCheck "three" › frequency: must be one of 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440 (got 3)',
      'a.check.ts › IcmpCheck "seven" › frequency: must be one of 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440 (got 7)',
      'a.check.ts › ApiCheck "four" › frequency: must be one of 0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440 (got 4)',
    ])
  })

  it('never prints the value of a variable', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck\nimport { EnvVar } from 'monitors-as-code'\nnew EnvVar('TOKEN', { value: 'hunter2-secret', secret: true, locked: 'no' })\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual(['a.check.ts › EnvVar "TOKEN" › locked: must be a boolean (got string)'])
    expect(lines.join('\n')).not.toContain('hunter2')
  })

  it('says when a failing value came from the config defaults', async () => {
    const lines = await failingLines({ cwd: fixture('defaults-offset') })
    expect(lines).toEqual(['a.check.ts › DnsCheck "two" › frequencyOffset: must be 1-20 when frequency is 2 (got 50) (from defaults in monitoring.config.ts)'])
  })

  it('names files relative to the working directory', async () => {
    const lines = await failingLines({ cwd: FIXTURES, config: 'defaults-offset' })
    expect(lines[0]).toMatch(
      /^defaults-offset\/a\.check\.ts › DnsCheck "two" › frequencyOffset: .*\(from defaults in defaults-offset\/monitoring\.config\.ts\)$/,
    )
  })
})

describe('import failures', () => {
  it('reports a syntax error with file, line and column, and still reports the other files', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n\nnew DnsCheck('a', {\n  name: 'A',,\n})\n`,
      'b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('b', { name: 'B', request: { query: '' } })\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^a\.check\.ts:4:\d+ › syntax error: .+/)
    expect(lines[1]).toBe('b.check.ts › DnsCheck "b" › request.query: must be at least 1 character long')
  })

  it("names a misspelt construct import and the nearest export, not the transpiler's internals", async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck\nimport {\n  DnsCheck,\n  DnsChek,\n} from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\nnew DnsChek('b', { name: 'B', request: { query: 'b.example.com' } })\n`,
      'b.check.ts': `// @ts-nocheck\nimport { StatusPageServce as Service } from "monitors-as-code"\nconst s = new Service('svc', { name: 'S' })\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([
      'a.check.ts:4 › imports DnsChek from "monitors-as-code", which exports no such name (did you mean DnsCheck?); its constructs are DnsCheck, IcmpCheck, ApiCheck, TcpCheck, UrlCheck, BrowserCheck, MultiStepCheck, PlaywrightCheck, HeartbeatCheck, EnvVar, StatusPageService, PrivateLocation, StatusPage, MaintenanceWindow, Snippet, CheckGroup, EmailAlertChannel, SlackAlertChannel, WebhookAlertChannel, SmsAlertChannel, PagerDutyAlertChannel, OpsgenieAlertChannel, MSTeamsAlertChannel',
      'b.check.ts:2 › imports StatusPageServce from "monitors-as-code", which exports no such name (did you mean StatusPageService?); its constructs are DnsCheck, IcmpCheck, ApiCheck, TcpCheck, UrlCheck, BrowserCheck, MultiStepCheck, PlaywrightCheck, HeartbeatCheck, EnvVar, StatusPageService, PrivateLocation, StatusPage, MaintenanceWindow, Snippet, CheckGroup, EmailAlertChannel, SlackAlertChannel, WebhookAlertChannel, SmsAlertChannel, PagerDutyAlertChannel, OpsgenieAlertChannel, MSTeamsAlertChannel',
    ])
    expect(lines.join('\n')).not.toMatch(/_monitorsascode|is not a constructor/)
  })

  it('says "did you mean \'monitors-as-code\'?" for a package name near it, and nothing for another missing module', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck\nimport { DnsCheck } from 'monitors'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
      'b.check.ts': `// @ts-nocheck\nimport { DnsCheck } from 'monitor-as-code'\nnew DnsCheck('b', { name: 'B', request: { query: 'b.example.com' } })\n`,
      'c.check.ts': `// @ts-nocheck\nimport { thing } from 'left-pad-of-nowhere'\nthing()\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([
      "a.check.ts:2 › cannot find module \"monitors\" (did you mean 'monitors-as-code'? the constructs are imported from 'monitors-as-code')",
      "b.check.ts:2 › cannot find module \"monitor-as-code\" (did you mean 'monitors-as-code'? the constructs are imported from 'monitors-as-code')",
      'c.check.ts:2 › cannot find module "left-pad-of-nowhere"',
    ])
  })

  it('reports a throw with the line of the throw, a missing module with the import line', async () => {
    const lines = await failingLines({ cwd: fixture('throws') })
    expect(lines).toEqual([
      'a.check.ts:5 › threw an error: NO_SUCH_VARIABLE_FOR_TESTS is not set',
      'b.check.ts:3 › cannot find module "./no-such-module.js"',
      'c.check.ts › DnsCheck "c" › request.frequencyOffset: is not a known field',
      'c.check.ts › DnsCheck "c" › frequencyOffset: must be 1-20 when frequency is 2 (got 25)',
    ])
  })

  it('names the error type of a throw and the helper file it came from', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'lib/hosts.ts': `export function hosts(): string[] {\n  const list: any = undefined\n  return list.map((h: string) => h)\n}\n`,
      'a.check.ts': `import { hosts } from './lib/hosts.js'\n\nhosts()\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([expect.stringMatching(/^a\.check\.ts:3 › threw TypeError: Cannot read properties of undefined/)])
  })

  it('reports a config that fails to import', async () => {
    const dir = tempProject({ 'monitoring.config.ts': `const x = process.env.NOPE!.length\nexport default { projectName: 'p' }\n` })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([expect.stringMatching(/^monitoring\.config\.ts:1 › threw TypeError: Cannot read properties of undefined/)])
  })
})

describe('"did you mean" for a misspelt value', () => {
  it('names the nearest location and enum value (recordType, comparison, method) after what is allowed and what was given', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck\nimport { ApiCheck, DnsCheck } from 'monitors-as-code'
new DnsCheck('dns', { name: 'D', request: { query: 'a.example.com', recordType: 'AAA' }, locations: ['eu-west1', 'mars-1'] })
new ApiCheck('api', { name: 'A', request: { url: 'https://a.example.com', method: 'get', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUAL', target: '200' }] } })
`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([
      expect.stringMatching(
        /^a\.check\.ts › DnsCheck "dns" › locations\.0: must be one of us-east-1, .*, eu-west-1, .* \(got "eu-west1"; did you mean eu-west-1\?\)$/,
      ),
      expect.stringMatching(/^a\.check\.ts › DnsCheck "dns" › locations\.1: must be one of us-east-1, .* \(got "mars-1"\)$/),
      'a.check.ts › DnsCheck "dns" › request.recordType: must be one of A, AAAA, CNAME, MX, TXT, SOA, NS, HTTPS (got "AAA"; did you mean AAAA?)',
      'a.check.ts › ApiCheck "api" › request.method: must be one of GET, POST, PUT, HEAD, DELETE, PATCH (got "get"; did you mean GET?)',
      expect.stringMatching(
        /^a\.check\.ts › ApiCheck "api" › request\.assertions\.0\.comparison: must be one of EQUALS, .* \(got "EQUAL"; did you mean EQUALS\?\)$/,
      ),
    ])
  })
})

describe('logical ids', () => {
  it('reports duplicates per kind naming both files, and malformed ids and keys', async () => {
    const lines = await failingLines({ cwd: fixture('duplicates') })
    expect(lines).toEqual([
      'b.check.ts › DnsCheck "shop-dns" › duplicate logical id: DnsCheck "shop-dns" is also declared at a.check.ts:3; logical ids must be unique per kind',
      'b.check.ts › EnvVar "TOKEN" › duplicate key: EnvVar "TOKEN" is also declared at a.check.ts:4; keys must be unique per kind',
      'b.check.ts › DnsCheck "has space" › logical id must be one or more of A-Z, a-z, 0-9 and _ - / # . (got "has space")',
      'b.check.ts › EnvVar "9LIVES" › key must be 1-128 characters of A-Z, a-z, 0-9 and _, not starting with a digit',
    ])
  })

  it('reports duplicate status page urls and an ICMP check with more than 50 environment variables, not 51 account variables', async () => {
    const vars = Array.from({ length: 51 }, (_, i) => `new EnvVar('V${String(i).padStart(2, '0')}', { value: 'x' })`).join('\n')
    const env = JSON.stringify(Array.from({ length: 51 }, (_, i) => ({ key: `E${i}`, value: 'x' })))
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts':
        `import { EnvVar, IcmpCheck, StatusPage } from 'monitors-as-code'\nnew StatusPage('one', { name: 'One', url: 'same', cards: [] })\nnew StatusPage('two', { name: 'Two', url: 'same', cards: [] })\n${vars}\n` +
        `new IcmpCheck('ping', { name: 'Ping', request: { hostname: 'example.com' }, environmentVariables: ${env} })\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([
      'a.check.ts › IcmpCheck "ping" › environmentVariables: must have at most 50 items (got 51)',
      'a.check.ts › StatusPage "two" › url: "same" is also the url of StatusPage "one" (a.check.ts); status page urls must be unique',
    ])
  })
})

describe('references', () => {
  it('reports references to constructs outside the project, of the wrong kind, or not constructs at all', async () => {
    const lines = await failingLines({ cwd: fixture('references') })
    expect(lines).toEqual([
      'monitoring.config.ts › StatusPageService "from-config" › is created at monitoring.config.ts:4, a file that checkMatch (**/*.check.ts) does not match, so it is not part of the project; create it in a check file, or widen checkMatch to include that file',
      'lib/services.ts › StatusPageService "search" › is created at lib/services.ts:3, a file that checkMatch (**/*.check.ts) does not match, so it is not part of the project; create it in a check file, or widen checkMatch to include that file',
      'pages.check.ts › DnsCheck "dns" › triggerIncident.serviceId: must be a StatusPageService construct of this project, e.g. const checkout = new StatusPageService(\'checkout\', { name: \'Checkout\' }) (got the string "svc-123")',
      'pages.check.ts › StatusPage "public" › cards.0.services.1: refers to StatusPageService "search", which is not part of this project: it is created in lib/services.ts, which checkMatch does not match',
      'pages.check.ts › StatusPage "public" › cards.0.services.2: must be a StatusPageService (got DnsCheck "dns")',
      'pages.check.ts › StatusPage "public" › cards.0.services.3: refers to StatusPageService "from-config", which is not part of this project: it is created in monitoring.config.ts, which checkMatch does not match',
    ])
  })
})

describe('config problems', () => {
  it('reports a missing config', async () => {
    const dir = tempProject({}, { link: false })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual([
      `no monitoring.config.ts (or checkly.config.ts) found in ${dir} or any parent directory: run "npx monitors init" to create one (with an example check file and a tsconfig.json), or pass --config <file>`,
    ])
    expect(await failingLines({ cwd: dir, config: 'nope.config.ts' })).toEqual(['config file nope.config.ts does not exist (given by --config)'])
  })

  it('reports unknown settings, unknown and bad defaults, never printing the API key', async () => {
    const lines = await failingLines({ cwd: fixture('config-bad') })
    const allowed =
      'activated, muted, doubleCheck, shouldFail, locations, tags, alertSettings, useGlobalAlertSettings, groupId, groupOrder, runtimeId, alertChannelSubscriptions, retryStrategy, runParallel, frequency, frequencyOffset, alertChannels'
    expect(lines).toEqual([
      expect.stringMatching(/^monitoring\.config\.ts › defaults\.locations\.0: must be one of .*\(got "eu-west-9"\)$/),
      'monitoring.config.ts › defaults.frequency: must not be 0: sub-minute frequencies are only for API and TCP checks',
      `monitoring.config.ts › defaults.frequncy: is not a check default: did you mean frequency? (allowed: ${allowed})`,
      `monitoring.config.ts › defaults.name: is not a check default (allowed: ${allowed})`,
      "monitoring.config.ts › api.baseUrl: must be an http(s) URL, e.g. https://api.example.com, or 'local' for the embedded local server",
      'monitoring.config.ts › checkMach: is not a config setting: did you mean checkMatch? (allowed: projectName, checkMatch, ignore, defaults, api, environments, defaultEnvironment)',
    ])
    expect(lines.join('\n')).not.toContain('super-secret-key-value')
  })

  it('says "did you mean" for a misspelt setting at every level: api, environments and their defaults, naming what is allowed', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p', ignor: ['x'], api: { baseURL: 'https://api.example.com' }, environments: { staging: { lok: 's.lock.json', api: { acountId: 'a' }, defaults: { tag: ['x'] } } } }\n`,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toEqual(
      expect.arrayContaining([
        'monitoring.config.ts › ignor: is not a config setting: did you mean ignore? (allowed: projectName, checkMatch, ignore, defaults, api, environments, defaultEnvironment)',
        'monitoring.config.ts › api.baseURL: is not an api setting: did you mean baseUrl? (allowed: baseUrl, accountId, apiKey, targetId)',
        'monitoring.config.ts › environments.staging.lok: is not an environment setting: did you mean lock? (allowed: api, lock, defaults)',
        'monitoring.config.ts › environments.staging.api.acountId: is not an api setting: did you mean accountId? (allowed: baseUrl, accountId, apiKey, targetId)',
        expect.stringMatching(
          /^monitoring\.config\.ts › environments\.staging\.defaults\.tag: is not a check default: did you mean tags\? \(allowed: activated, .*\)$/,
        ),
      ]),
    )
    expect(lines).toHaveLength(5)
  })

  it('reports a config without a default export, and a config matching no files', async () => {
    expect(await failingLines({ cwd: fixture('config-no-default') })).toEqual([
      "monitoring.config.ts › must export the config as its default export, e.g. export default defineConfig({ projectName: 'shop' }) (got no default export)",
    ])
    expect(await failingLines({ cwd: fixture('no-match') })).toEqual([
      'monitoring.config.ts › checkMatch: matches no files in this directory (monitors/**/*.check.ts); node_modules and .git are never searched',
    ])
  })

  it('reports a missing projectName and wrong types', async () => {
    const dir = tempProject({ 'monitoring.config.ts': `export default { checkMatch: 5, defaults: { tags: 'shop' } }\n` })
    const lines = await failingLines({ cwd: dir })
    expect(lines).toContain('monitoring.config.ts › projectName: is required')
    expect(lines).toContain('monitoring.config.ts › defaults.tags: must be an array (got string)')
    expect(lines).toContain('monitoring.config.ts › checkMatch: must be a string (got number)')
  })
})
