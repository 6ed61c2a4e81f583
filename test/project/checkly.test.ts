/**
 * A project written for the hosted service's CLI, loaded as it is: `checkly.config.ts` read as
 * the config, `checkly` and `checkly/constructs` resolved to this package's compatibility entry,
 * each hosted construct mapped onto this project's, with the hosted meaning where the two
 * differ (docs/migrating-from-checkly.md). No server: what the loader builds.
 */
import { cpSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatProblem, loadProject, ProjectError, type LoadedProject } from '../../src/project/index.js'
import type { DesiredResource } from '../../src/resources/types.js'
import { fileNameFor } from '../../src/import/out-file.js'
import {
  AlertEscalationBuilder,
  AssertionBuilder,
  DnsAssertionBuilder,
  Frequency,
  IcmpAssertionBuilder,
  RetryStrategyBuilder,
  TcpAssertionBuilder,
  UrlAssertionBuilder,
} from '../../constructs/checkly/constructs.js'
import { REPO_ROOT, tempProject } from './helpers.js'
import { hasChromium } from '../helpers/browser.js'
import { monitors } from '../helpers/cli.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { prepareTestRuntime } from '../helpers/runtime.js'

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'checkly')

const payload = (project: LoadedProject, kind: string, id: string): Record<string, any> => {
  const found = project.resources.find((r) => r.kind === kind && r.logicalId === id)
  if (!found) throw new Error(`no ${kind} ${id} among ${project.resources.map((r) => `${r.kind}:${r.logicalId}`).join(', ')}`)
  return found.payload as Record<string, any>
}
const resource = (project: LoadedProject, kind: string, id: string): DesiredResource => project.resources.find((r) => r.kind === kind && r.logicalId === id)!

async function problemsOf(options: Parameters<typeof loadProject>[0]): Promise<string[]> {
  try {
    await loadProject(options)
  } catch (error) {
    if (error instanceof ProjectError) return error.problems.map(formatProblem)
    throw error
  }
  throw new Error('the project loaded without problems')
}

const config = (checks: string, extra = '') => `import { defineConfig } from 'checkly'
import { Frequency, RetryStrategyBuilder, AlertEscalationBuilder } from 'checkly/constructs'
export default defineConfig({ projectName: 'p', logicalId: 'p', ${extra} checks: { checkMatch: '**/*.check.ts', ${checks} } })
`

describe('checkly.config.ts as the config', () => {
  it('is found like monitoring.config.ts; its checkMatch, ignoreDirectoriesMatch and testMatch are read, its defaults kept for the hosted constructs', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'mixed', 'src', '__checks__') })
    expect(path.basename(project.configFile)).toBe('checkly.config.ts')
    expect(project.config).toMatchObject({
      projectName: 'Website Monitoring',
      checkMatch: ['**/__checks__/**/*.check.ts'],
      ignore: ['**/drafts/**'],
      // this project's own defaults stay empty: the hosted constructs apply the config's
      defaults: {},
      checkly: { browserTestMatch: ['**/__checks__/**/*.spec.ts'], multiStepTestMatch: [] },
    })
    expect(project.config.checkly!.defaults.checks).toMatchObject({
      frequency: Frequency.EVERY_5M,
      locations: ['us-east-1', 'eu-west-1'],
      runtimeId: '2024.09',
    })
    // the draft under ignoreDirectoriesMatch (it throws when loaded) is not loaded
    expect(project.files).toEqual(['src/__checks__/api.check.ts', 'src/__checks__/group.check.ts', 'src/__checks__/status/status.check.ts'])
  })

  it("uses the hosted CLI's default checkMatch, **/*.check.{js,ts}; monitors import writes the TypeScript file it matches", async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'groups') })
    expect(project.config.checkMatch).toEqual(['**/*.check.{js,ts}'])
    expect(project.files).toEqual(['grouped.check.ts'])
    expect(fileNameFor('**/*.check.{js,ts}', 'imported')).toBe('imported.check.ts')
    expect(fileNameFor('checks/*.{check,monitor}.ts', 'imported')).toBe('checks/imported.check.ts')
  })

  it('a monitoring.config.ts beside it wins (this project keeps its own config)', async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'monitoring.config.ts': "import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'own' })\n",
      'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('d', { name: 'D', request: { query: 'example.com' } })\n",
    })
    const project = await loadProject({ cwd: dir })
    expect(path.basename(project.configFile)).toBe('monitoring.config.ts')
    expect(project.config.checkly).toBeUndefined()
  })

  it('refuses settings it does not know, naming the nearest one, and a checkMatch that is not a glob', async () => {
    const dir = tempProject({
      'checkly.config.ts':
        "import { defineConfig } from 'checkly'\nexport default defineConfig({ projectName: 'p', logicalId: 'p', checkz: {}, checks: { checkMatch: 3, frequncy: 5, browserChecks: { testMach: '*.spec.ts' } } } as never)\n",
    })
    expect(await problemsOf({ cwd: dir })).toEqual([
      'checkly.config.ts › checkz: is not a setting of checkly.config.ts: did you mean checks? (allowed: projectName, logicalId, repoUrl, checks, cli, bundle, caching, runner)',
      expect.stringMatching(/^checkly\.config\.ts › checks\.frequncy: is not a setting of checkly\.config\.ts: did you mean frequency\?/),
      "checkly.config.ts › checks.checkMatch: must be a glob or a list of globs, e.g. '**/__checks__/**/*.check.ts' (got 3)",
      expect.stringMatching(/^checkly\.config\.ts › checks\.browserChecks\.testMach: is not a setting of checkly\.config\.ts: did you mean testMatch\?/),
    ])
  })
})

describe('imports of checkly and checkly/constructs', () => {
  it('resolve to the compatibility entry even where the hosted CLI is installed: it never runs', async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': "import { DnsMonitor } from 'checkly/constructs'\nnew DnsMonitor('d', { name: 'D', request: { recordType: 'A', query: 'example.com' } })\n",
      'node_modules/checkly/package.json': JSON.stringify({
        name: 'checkly',
        version: '9.0.0',
        main: 'index.js',
        exports: { '.': './index.js', './constructs': './constructs.js' },
      }),
      'node_modules/checkly/index.js': "throw new Error('the hosted CLI ran')\n",
      'node_modules/checkly/constructs.js': "throw new Error('the hosted CLI ran')\n",
    })
    const project = await loadProject({ cwd: dir })
    expect(project.resources.map((r) => `${r.construct}:${r.logicalId}`)).toEqual(['DnsMonitor:d'])
  })

  it('a name checkly/constructs does not export here is a problem naming the file, the line and the guide', async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': "import { CheckGroupV2,\n  DnsMonitr } from 'checkly/constructs'\nnew DnsMonitr('d', { name: 'D' })\n",
    })
    expect(await problemsOf({ cwd: dir })).toEqual([
      'a.check.ts:2 › imports DnsMonitr from "checkly/constructs", which monitors does not know (did you mean DnsMonitor?): see docs/migrating-from-checkly.md for the hosted constructs that map',
    ])
  })

  it('constructs made at the top level of a helper module (alert-channels.ts) are part of the project, as on the hosted service', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'alerts') })
    expect(resource(project, 'email-alert-channel', 'email-channel-1').file).toBe('alert-channels.ts')
    // a monitoring.config.ts project keeps its rule: such a construct is outside the project
    const own = tempProject({
      'monitoring.config.ts': "import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'own' })\n",
      'channels.ts': "import { EmailAlertChannel } from 'monitors-as-code'\nexport const ops = new EmailAlertChannel('ops', { address: 'ops@example.com' })\n",
      'a.check.ts':
        "import { DnsCheck } from 'monitors-as-code'\nimport { ops } from './channels'\nnew DnsCheck('d', { name: 'D', request: { query: 'example.com' }, alertChannels: [ops] })\n",
    })
    expect((await problemsOf({ cwd: own })).some((p) => p.includes('is not part of the project'))).toBe(true)
  })
})

describe('the check defaults, applied as the hosted constructs apply them', () => {
  it('a check takes what it leaves out from the config; its own tags replace the default ones (not merged)', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'api') })
    expect(payload(project, 'api-check', 'hello-api')).toMatchObject({
      frequency: 10,
      locations: ['us-east-1', 'eu-west-1'],
      tags: ['api'],
      runtimeId: '2024.09',
    })
    expect(payload(project, 'api-check', 'user-api')).toMatchObject({ frequency: 5, tags: ['users'] })
  })

  it("browser checks: own, then the group's browserChecks frequency, then the config's browserChecks, then the group's frequency, then the config's checks", async () => {
    const browser = await loadProject({ cwd: path.join(FIXTURES, 'browser') })
    // testMatch: logical id its path, name its file name, the browserChecks defaults
    const home = payload(browser, 'browser-check', '__checks__/web/homepage.spec.ts')
    expect(home).toMatchObject({
      name: 'homepage.spec.ts',
      frequency: 10,
      runtimeId: '2025.04',
      environmentVariables: [expect.objectContaining({ key: 'ENVIRONMENT_URL' })],
    })
    expect(payload(browser, 'browser-check', 'login-flow')).toMatchObject({
      frequency: 5,
      sslCheckDomain: 'shop.example.com',
      environmentVariables: [expect.objectContaining({ key: 'ENVIRONMENT_URL' })],
    })
    // login.spec.ts is the login flow's script: not a second browser check
    expect(
      browser.resources
        .filter((r) => r.kind === 'browser-check')
        .map((r) => r.logicalId)
        .sort(),
    ).toEqual(['__checks__/web/homepage.spec.ts', 'login-flow'])
    expect(payload(browser, 'multistep-check', '__checks__/flows/orders.spec.ts')).toMatchObject({ name: 'orders.spec.ts', frequency: 30 })
    expect(payload(browser, 'playwright-check', 'smoke-suite')).toMatchObject({ frequency: 60, pwProjects: ['chromium'], pwTags: ['@smoke'] })

    const groups = await loadProject({ cwd: path.join(FIXTURES, 'groups') })
    // the group's spec files: its browserChecks frequency over its own frequency
    expect(payload(groups, 'browser-check', 'web-specs/landing.spec.ts')).toMatchObject({ name: 'web-specs/landing.spec.ts', frequency: 30 })
    expect(resource(groups, 'browser-check', 'web-specs/landing.spec.ts').refs).toEqual([
      expect.objectContaining({ kind: 'check-group', logicalId: 'web-group' }),
    ])
    // a browser check of the group takes the group's browserChecks frequency too; a monitor the group's frequency
    expect(payload(groups, 'browser-check', 'web-browser')).toMatchObject({ frequency: 30 })
    expect(payload(groups, 'dns-check', 'web-dns')).toMatchObject({ frequency: 15 })
  })

  it('frequencies are the Frequency constants, sub-minute ones with their offset', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'api') })
    expect(payload(project, 'api-check', 'health-30s')).toMatchObject({ frequency: 0, frequencyOffset: 30 })
    expect(Frequency.EVERY_24H.frequency).toBe(1440)
  })
})

describe("the hosted meaning where it differs from monitors' own", () => {
  it('monitors do not retry unless told: doubleCheck is false on every monitor, a retryStrategy kept', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'monitors') })
    for (const r of project.resources) expect(r.payload.doubleCheck, r.logicalId).toBe(false)
    expect(payload(project, 'tcp-check', 'smtp-port').retryStrategy).toEqual({
      type: 'EXPONENTIAL',
      baseBackoffSeconds: 5,
      maxRetries: 2,
      maxDurationSeconds: 600,
      sameRegion: true,
    })
    // a check (not a monitor) keeps the service's default double check
    const api = await loadProject({ cwd: path.join(FIXTURES, 'api') })
    expect(payload(api, 'api-check', 'hello-api').doubleCheck).toBe(true)
    // "no retries" turns the double check off, as the hosted CLI sends it
    expect(payload(api, 'api-check', 'not-found-check')).toMatchObject({ doubleCheck: false, retryStrategy: { type: 'NO_RETRIES' } })
    expect(payload(api, 'api-check', 'health-30s').retryStrategy).toMatchObject({ type: 'FIXED', onlyOn: ['NETWORK_ERROR'] })
  })

  it("a group's locations replace its checks'; a V2 group's retry strategy replaces theirs when set; a V1 group's retry, run-parallel and alert settings always do", async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'groups') })
    const dns = payload(project, 'dns-check', 'web-dns')
    // its own ap-south-1 and noRetries() give way to the group's
    expect(dns.locations ?? null).toBeNull()
    expect(dns.retryStrategy).toBeUndefined()
    expect(payload(project, 'check-group', 'web-group')).toMatchObject({
      locations: ['eu-west-1', 'eu-central-1'],
      retryStrategy: { type: 'FIXED', maxRetries: 1 },
      useGlobalAlertSettings: true,
    })
    const url = payload(project, 'url-check', 'legacy-url')
    expect(url).toMatchObject({ runParallel: true, useGlobalAlertSettings: true, doubleCheck: false })
    expect(url.alertSettings).toBeUndefined()
    expect(url.retryStrategy).toBeUndefined()
    expect(payload(project, 'check-group', 'legacy-group')).toMatchObject({
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      runParallel: true,
      doubleCheck: false,
    })
    // groupId: group.ref() joins the group
    expect(resource(project, 'tcp-check', 'legacy-tcp').refs).toEqual([expect.objectContaining({ kind: 'check-group', logicalId: 'legacy-group' })])
    // a V2 group that sets nothing leaves its checks' own settings: the config's retry strategy here
    expect(payload(project, 'heartbeat-check', 'folder-heartbeat')).toMatchObject({
      locations: ['us-east-1'],
      retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 30 },
    })
  })

  it('a V1 group without a retry strategy gives its checks its doubleCheck (true unless set); a V2 group leaves theirs', async () => {
    const dir = tempProject({
      'checkly.config.ts': config('retryStrategy: RetryStrategyBuilder.fixedStrategy({ maxRetries: 3 })'),
      'a.check.ts': `import { ApiCheck, CheckGroupV1, CheckGroupV2, DnsMonitor } from 'checkly/constructs'
const v1 = new CheckGroupV1('v1', { name: 'V1' })
const v2 = new CheckGroupV2('v2', { name: 'V2', runParallel: true, alertEscalationPolicy: AlertEscalationBuilder.runBasedEscalation(3) })
new DnsMonitor('in-v1', { name: 'in v1', group: v1, runParallel: true, request: { recordType: 'A', query: 'example.com' } })
new DnsMonitor('in-v2', { name: 'in v2', group: v2, alertEscalationPolicy: AlertEscalationBuilder.timeBasedEscalation(10), request: { recordType: 'A', query: 'example.com' } })
new DnsMonitor('alone', { name: 'alone', request: { recordType: 'A', query: 'example.com' } })
`.replace('import {', 'import { AlertEscalationBuilder, '),
    })
    const project = await loadProject({ cwd: dir })
    const inV1 = payload(project, 'dns-check', 'in-v1')
    expect(inV1).toMatchObject({ runParallel: false, doubleCheck: false, useGlobalAlertSettings: true })
    expect(inV1.retryStrategy).toBeUndefined()
    const inV2 = payload(project, 'dns-check', 'in-v2')
    expect(inV2).toMatchObject({ runParallel: true, useGlobalAlertSettings: true, retryStrategy: { type: 'FIXED', maxRetries: 3 } })
    expect(inV2.alertSettings).toBeUndefined()
    expect(payload(project, 'check-group', 'v2')).toMatchObject({
      useGlobalAlertSettings: false,
      alertSettings: { runBasedEscalation: { failedRunThreshold: 3 } },
    })
    expect(payload(project, 'dns-check', 'alone')).toMatchObject({ doubleCheck: false, retryStrategy: { type: 'FIXED', maxRetries: 3 } })
  })
})

describe('references to resources not in the project', () => {
  it("CheckGroupV2.fromId(id) is the check's groupId; AlertChannel.fromId(id) a subscription by id beside the channels of the project", async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': `import { AlertChannel, CheckGroupV1, CheckGroupV2, EmailAlertChannel, UrlMonitor } from 'checkly/constructs'
const ops = new EmailAlertChannel('ops', { address: 'ops@example.com' })
new UrlMonitor('u', { name: 'U', group: CheckGroupV2.fromId(12), alertChannels: [ops, AlertChannel.fromId(7)], request: { url: 'https://example.com' } })
new UrlMonitor('v', { name: 'V', group: CheckGroupV1.fromId(13), request: { url: 'https://example.com' } })
`,
    })
    const project = await loadProject({ cwd: dir })
    const u = resource(project, 'url-check', 'u')
    expect(u.payload).toMatchObject({ groupId: 12, alertChannelSubscriptions: [{ alertChannelId: 7, activated: true }, { activated: true }] })
    expect(u.refs).toEqual([expect.objectContaining({ kind: 'email-alert-channel', logicalId: 'ops' })])
    expect(payload(project, 'url-check', 'v').groupId).toBe(13)
  })
})

describe('the hosted builders', () => {
  it("build the API's assertions, retry strategies and escalations, with the hosted defaults", () => {
    expect(AssertionBuilder.statusCode().equals(200)).toEqual({ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', regex: null })
    expect(AssertionBuilder.jsonBody('$.id').isNotNull()).toEqual({ source: 'JSON_BODY', comparison: 'NOT_NULL', property: '$.id', target: '', regex: null })
    expect(AssertionBuilder.headers('x-a', '(\\d+)').greaterThan(3)).toEqual({
      source: 'HEADERS',
      comparison: 'GREATER_THAN',
      property: 'x-a',
      target: '3',
      regex: '(\\d+)',
    })
    expect(DnsAssertionBuilder.responseCode().equals('NOERROR').source).toBe('RESPONSE_CODE')
    expect(TcpAssertionBuilder.responseData().contains('220').source).toBe('RESPONSE_DATA')
    expect(UrlAssertionBuilder.statusCode().lessThan(400).comparison).toBe('LESS_THAN')
    expect(IcmpAssertionBuilder.latency('avg').lessThan(100)).toMatchObject({ source: 'LATENCY', property: 'avg' })
    expect(RetryStrategyBuilder.linearStrategy({ maxRetries: 3 })).toEqual({
      type: 'LINEAR',
      baseBackoffSeconds: 60,
      maxRetries: 3,
      maxDurationSeconds: 600,
      sameRegion: true,
    })
    expect(RetryStrategyBuilder.singleRetry()).toEqual({ type: 'SINGLE_RETRY', baseBackoffSeconds: 60, sameRegion: true })
    expect(AlertEscalationBuilder.runBasedEscalation(2, { amount: 1 })).toEqual({
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 2 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 1, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    })
  })

  it('monitors take them as this project has its assertions: ICMP stdDev is stddev, the empty regex left out', async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'monitors') })
    const icmp = payload(project, 'icmp-check', 'gateway-ping')
    expect(icmp.request.assertions.map((a: any) => a.property)).toEqual(['avg', 'stddev', '$.packetLoss'])
    expect(payload(project, 'dns-check', 'acme-dns').request.assertions[0]).toEqual({
      source: 'RESPONSE_CODE',
      comparison: 'EQUALS',
      target: 'NOERROR',
      property: '',
    })
    expect(payload(project, 'heartbeat-check', 'nightly-backup').heartbeat).toEqual({ period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' })
    expect(payload(project, 'tcp-check', 'smtp-port').request.data).toBeNull()
  })
})

describe('what does not map', () => {
  it('each construct without a counterpart is a problem naming the file, the construct and what to do; never a crash', async () => {
    const problems = await problemsOf({ cwd: path.join(FIXTURES, 'unmapped') })
    expect(problems).toHaveLength(6)
    for (const [construct, id] of [
      ['AgenticCheck', 'agentic-login'],
      ['Dashboard', 'ops-dashboard'],
      ['StatusPageV3', 'status-v3'],
      ['SslMonitor', 'acme-cert'],
      ['GrpcMonitor', 'grpc-health'],
      ['TracerouteMonitor', 'edge-route'],
    ]) {
      const line = problems.find((p) => p.startsWith(`__checks__/unmapped.check.ts › ${construct} "${id}" › has no counterpart in monitors yet`))
      expect(line, construct).toBeDefined()
      expect(line).toContain('docs/migrating-from-checkly.md#what-does-not-map')
    }
  })

  it('a PrivateLocation maps, in the hosted shape, and checks and groups name it (or a slug) in privateLocations; one by id only is a problem', async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': `import { CheckGroupV2, PrivateLocation, UrlMonitor } from 'checkly/constructs'
const office = new PrivateLocation('office', { name: 'Office', slugName: 'office', icon: 'location', proxyUrl: 'http://proxy.office.test:3128' })
new CheckGroupV2('lab-group', { name: 'Lab', privateLocations: ['lab'] })
new UrlMonitor('intranet', { name: 'Intranet', privateLocations: [office, 'lab'], request: { url: 'https://intranet.acme.com' } })
`,
    })
    const project = await loadProject({ cwd: dir })
    expect(payload(project, 'private-location', 'office')).toEqual({
      name: 'Office',
      slugName: 'office',
      icon: 'location',
      proxyUrl: 'http://proxy.office.test:3128',
    })
    expect(payload(project, 'url-check', 'intranet').privateLocations).toEqual(['private-location:office', 'lab'])
    expect(payload(project, 'check-group', 'lab-group').privateLocations).toEqual(['lab'])
    const byId = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': `import { PrivateLocation, UrlMonitor } from 'checkly/constructs'
new UrlMonitor('intranet', { name: 'Intranet', privateLocations: [PrivateLocation.fromId('0baf2a80-7266-44af-b56c-2af7086782ee')], request: { url: 'https://intranet.acme.com' } })
`,
    })
    expect(await problemsOf({ cwd: byId })).toEqual([
      expect.stringContaining(
        'UrlMonitor "intranet" › privateLocations.0: PrivateLocation.fromId("0baf2a80-7266-44af-b56c-2af7086782ee"): name the location by its slugName',
      ),
    ])
  })

  it('what is dropped is said: warnings for props without effect here, a test-only check left out with a warning', async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': `import { ApiCheck, DnsMonitor, SlackAlertChannel, WebhookAlertChannel } from 'checkly/constructs'
new SlackAlertChannel('slack', { url: 'https://hooks.slack.com/services/T0/B0/X', channel: '#ops' })
new WebhookAlertChannel('hook', { name: 'Hook', url: 'https://hooks.example.com/x', webhookSecret: 's3cret', webhookType: 'WEBHOOK' })
new DnsMonitor('dns', { name: 'DNS', description: 'Resolves the shop', request: { recordType: 'A', query: 'example.com' } })
new ApiCheck('preview', { name: 'Preview', testOnly: true, request: { method: 'GET', url: 'https://preview.example.com' } })
`,
    })
    const project = await loadProject({ cwd: dir })
    expect(project.resources.map((r) => r.logicalId).sort()).toEqual(['dns', 'hook', 'slack'])
    expect(project.warnings.map(formatProblem)).toEqual([
      'a.check.ts › SlackAlertChannel "slack" › channel: is not used here: an incoming webhook posts to the channel it was made for',
      expect.stringMatching(/^a\.check\.ts › WebhookAlertChannel "hook" › webhookSecret: is not used here: bodies are not signed/),
      'a.check.ts › DnsMonitor "dns" › description: is not kept: here only browser, multi-step and Playwright checks have a description',
      expect.stringMatching(/^a\.check\.ts › ApiCheck "preview" › testOnly: is true: the check is left out of the project/),
    ])
    // the secret of the webhook is in no payload
    expect(JSON.stringify(project.resources)).not.toContain('s3cret')
  })

  it("a monitor's doubleCheck, a V2 group's doubleCheck and an API check's own variables are problems saying what to write instead", async () => {
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts': `import { ApiCheck, CheckGroupV2, TcpMonitor } from 'checkly/constructs'
new CheckGroupV2('g', { name: 'G', doubleCheck: true })
new TcpMonitor('t', { name: 'T', doubleCheck: true, request: { hostname: 'example.com', port: 443 } } as never)
new ApiCheck('a', { name: 'A', environmentVariables: [{ key: 'TOKEN', value: 'x' }], request: { method: 'OPTIONS', url: 'https://example.com' } })
`,
    })
    const problems = await problemsOf({ cwd: dir })
    expect(problems).toEqual([
      expect.stringMatching(/^a\.check\.ts › CheckGroupV2 "g" › doubleCheck: is no longer a prop of CheckGroupV2 .*use retryStrategy/),
      expect.stringMatching(/^a\.check\.ts › TcpMonitor "t" › doubleCheck: is not a prop of monitors: use retryStrategy/),
      expect.stringMatching(/^a\.check\.ts › ApiCheck "a" › environmentVariables: ApiChecks have no variables of their own here/),
      'a.check.ts › ApiCheck "a" › request.method: is OPTIONS: API checks here make GET, POST, PUT, HEAD, DELETE or PATCH requests',
    ])
  })

  it("an API check's setupScript file that imports other files is a problem; one that does not is its script", async () => {
    const project = await loadProject({ cwd: path.join(FIXTURES, 'api') })
    expect(payload(project, 'api-check', 'orders-api')).toMatchObject({
      localSetupScript: expect.stringContaining("request.headers['X-Request-Id']"),
      localTearDownScript: "if (response.statusCode === 204) response.body = '[]'",
    })
    const dir = tempProject({
      'checkly.config.ts': config(''),
      'a.check.ts':
        "import { ApiCheck } from 'checkly/constructs'\nnew ApiCheck('a', { name: 'A', setupScript: { entrypoint: './setup.ts' }, request: { method: 'GET', url: 'https://example.com' } })\n",
      'setup.ts': "import { sign } from './sign'\nsign()\n",
      'sign.ts': 'export function sign() {}\n',
    })
    expect(await problemsOf({ cwd: dir })).toEqual([
      expect.stringMatching(/^a\.check\.ts › ApiCheck "a" › setupScript\.entrypoint: \.\/setup\.ts imports other files of the project/),
    ])
  })
})

describe.skipIf(!hasChromium)('monitors test of a browser check picked up by testMatch', () => {
  let site: HttpServerHandle
  beforeAll(async () => {
    site = await startHttpServer()
    site.route('/', {
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1></body></html>',
    })
    process.env.MONITORS_RUNTIME_CACHE = await prepareTestRuntime()
  }, 180_000)
  afterAll(async () => {
    delete process.env.ENVIRONMENT_URL
    await site?.close()
  })

  it('runs it through Chromium from this machine and passes', async () => {
    const dir = tempProject({})
    cpSync(path.join(FIXTURES, 'browser'), dir, { recursive: true })
    // read by checkly.config.ts (browserChecks.environmentVariables) when the project loads
    process.env.ENVIRONMENT_URL = site.origin
    const tested = await monitors(dir, ['test', '--target', 'browser-check:__checks__/web/homepage.spec.ts'], {
      MONITORS_RUNTIME_CACHE: process.env.MONITORS_RUNTIME_CACHE,
    })
    expect(tested.code, tested.output).toBe(0)
    expect(tested.stdout).toMatch(/browser-check:__checks__\/web\/homepage\.spec\.ts "homepage\.spec\.ts".*PASSED/)
  }, 180_000)
})
