/**
 * The GitHub Actions example is safe as written: its steps are run here as the runner would
 * run them (bash, the workflow's env with secrets unset turned into empty strings, CI=true),
 * against the config its README shows (two environments, staging and production).
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { makeProject, repo } from '../helpers/cli.js'
import { startLocalServer } from '../../src/server/index.js'
import { caller } from '../server/helpers.js'

const STAGING_READ = 'stg-read-key-0123456789abcdef012345'
const STAGING_WRITE = 'stg-write-key-0123456789abcdef01234'
const PRODUCTION_READ = 'prod-read-key-0123456789abcdef01234'
const PRODUCTION_WRITE = 'prod-write-key-0123456789abcdef0123'

const exec = promisify(execFile)
const workflow = readFileSync(join(repo, 'examples/github-actions/.github/workflows/monitors.yml'), 'utf8')
/** The monitoring.config.ts the example's README shows. */
const exampleConfig = (() => {
  const readme = readFileSync(join(repo, 'examples/github-actions/README.md'), 'utf8')
  const block = /```ts\n\/\/ monitoring\.config\.ts\n([\s\S]*?)```/.exec(readme)?.[1]
  expect(block, 'the config in examples/github-actions/README.md').toBeDefined()
  return block as string
})()

/** The lines of one job (from `  name:` to the next job). */
function job(name: string): string {
  const start = workflow.indexOf(`\n  ${name}:\n`)
  expect(start, `job ${name}`).toBeGreaterThan(0)
  const rest = workflow.slice(start + 1)
  const next = rest.slice(1).search(/\n {2}[a-z-]+:\n/)
  return next === -1 ? rest : rest.slice(0, next + 1)
}

/** The `run: |` script of the step named `step` in `jobText`. */
function script(jobText: string, step: string): string {
  const lines = jobText.split('\n')
  const at = lines.findIndex((l) => l.trim() === `- name: ${step}`)
  expect(at, `step ${step}`).toBeGreaterThan(-1)
  const run = lines.findIndex((l, i) => i > at && /^\s+run: \|$/.test(l))
  const indent = lines[run + 1].search(/\S/)
  const body: string[] = []
  for (const line of lines.slice(run + 1)) {
    if (line.trim() !== '' && line.search(/\S/) < indent) break
    body.push(line.slice(indent))
  }
  return body.join('\n')
}

/** Runs a step's script with bash as the runner does (`bash -e`), in `cwd`. */
async function runStep(text: string, cwd: string, env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITORING_') && k !== 'CI'))
  const output = join(cwd, 'github-output')
  const path = `${join(repo, 'node_modules', '.bin')}:${process.env.PATH}`
  // what the step wrote to $GITHUB_OUTPUT (nothing when it wrote no output)
  const github = () => (existsSync(output) ? readFileSync(output, 'utf8') : '')
  try {
    const result = await exec('bash', ['-e', '-c', text], {
      cwd,
      env: { ...base, PATH: path, NO_COLOR: '1', CI: 'true', GITHUB_OUTPUT: output, GITHUB_STEP_SUMMARY: join(cwd, 'summary'), ...env },
    })
    return { code: 0, output: result.stdout + result.stderr, github: github() }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}`, github: github() }
  }
}

/** The secrets, all unset (GitHub Actions turns them into empty strings). */
const unsetSecrets = {
  STAGING_API_URL: '',
  STAGING_ACCOUNT_ID: '',
  PRODUCTION_API_URL: '',
  PRODUCTION_ACCOUNT_ID: '',
  MONITORING_API_KEY: '',
  API_TOKEN: '',
}

/** The lines of one step of a job (from its `- name:` to the next step). */
function step(jobText: string, name: string): string {
  const lines = jobText.split('\n')
  const at = lines.findIndex((l) => l.trim() === `- name: ${name}`)
  expect(at, `step ${name}`).toBeGreaterThan(-1)
  const indent = lines[at].search(/\S/)
  const end = lines.findIndex((l, i) => i > at && l.trim() !== '' && l.search(/\S/) <= indent)
  return lines.slice(at, end === -1 ? undefined : end).join('\n')
}

/** The secret `text` (a job or a step) passes as MONITORING_API_KEY. */
function keySecret(text: string): string {
  const name = /^\s+MONITORING_API_KEY: \$\{\{ secrets\.([A-Z_]+) \}\}$/m.exec(text)?.[1]
  expect(name, text).toBeDefined()
  return name as string
}

/** A variable a job or a step sets to a constant (`MONITORS_ENV: staging`). */
function constant(text: string, name: string): string {
  const value = new RegExp(`^\\s+${name}: ([a-z-]+)$`, 'm').exec(text)?.[1]
  expect(value, `${name} in ${text}`).toBeDefined()
  return value as string
}

const cli = (text: string) => text.replaceAll('npx monitors', `node ${join(repo, 'bin/monitors.cjs')}`)

/** The `with:` inputs of a step that uses monitors' action, `${{ matrix.environment }}` and `${{ env.X }}` filled from `env`. */
function actionInputs(stepText: string, env: Record<string, string>): Record<string, string> {
  expect(stepText).toMatch(/^\s+uses: \.\/node_modules\/monitors-as-code$/m)
  const lines = stepText.split('\n')
  const at = lines.findIndex((l) => /^\s+with:$/.test(l))
  expect(at, stepText).toBeGreaterThan(-1)
  const indent = lines[at + 1].search(/\S/)
  const inputs: Record<string, string> = {}
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === '' || line.search(/\S/) < indent) break
    const [, key, value] = /^\s+([a-z-]+): (.*)$/.exec(line) as RegExpExecArray
    inputs[key] = value.replace('${{ matrix.environment }}', env.MONITORS_ENV ?? '').replace(/\$\{\{ env\.([A-Z_]+) \}\}/g, (_, name) => env[name] ?? '')
  }
  return inputs
}

/**
 * Runs a step that uses monitors' action (action.yml) as GitHub Actions runs it: its one step,
 * action/run.mjs, with the step's inputs as INPUT_* and its environment, in `cwd`. What the step
 * added to the run's summary is returned with its outputs.
 */
async function runAction(jobText: string, name: string, cwd: string, env: Record<string, string>) {
  const stepText = step(jobText, name)
  const inputs = actionInputs(stepText, env)
  const action = readFileSync(join(repo, 'action.yml'), 'utf8')
  expect(action).toContain('run: node "$GITHUB_ACTION_PATH/action/run.mjs"')
  const given = Object.fromEntries(Object.entries(inputs).map(([key, value]) => [`INPUT_${key.toUpperCase().replace(/-/g, '_')}`, value]))
  const summaryFile = join(cwd, 'summary')
  rmSync(summaryFile, { force: true })
  rmSync(join(cwd, 'github-output'), { force: true })
  const result = await runStep(`node ${join(repo, 'action/run.mjs')}`, cwd, { INPUT_COMMENT: 'true', INPUT_GITHUB_TOKEN: 'gh-token', ...env, ...given })
  return { ...result, summary: existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8') : '' }
}

/** A stand-in for GitHub's REST API on loopback: the comments of pull request 7 of team/shop. */
async function fakeGitHub() {
  const comments: { id: number; body: string }[] = []
  const seen: string[] = []
  const body = async (request: IncomingMessage) => {
    let text = ''
    for await (const chunk of request) text += chunk
    return JSON.parse(text || '{}')
  }
  const server: Server = createServer(async (request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.authorization}`)
    const reply = (status: number, json: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json))
    if (request.method === 'GET' && request.url?.startsWith('/repos/team/shop/issues/7/comments')) return reply(200, comments)
    if (request.method === 'POST' && request.url === '/repos/team/shop/issues/7/comments') {
      const comment = { id: comments.length + 1, body: (await body(request)).body }
      comments.push(comment)
      return reply(201, comment)
    }
    const patch = /^\/repos\/team\/shop\/issues\/comments\/(\d+)$/.exec(request.url ?? '')
    if (request.method === 'PATCH' && patch) {
      const comment = comments.find((c) => c.id === Number(patch[1]))
      if (!comment) return reply(404, {})
      comment.body = (await body(request)).body
      return reply(200, comment)
    }
    reply(404, { message: 'not found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, comments, seen, close: () => new Promise((resolve) => server.close(resolve)) }
}

/** The pull-request matrix: each environment with the prefix of its secrets. */
const matrix = [
  { environment: 'staging', secrets: 'STAGING' },
  { environment: 'production', secrets: 'PRODUCTION' },
]

describe('the GitHub Actions example', () => {
  it('fails on missing secrets, naming each', async () => {
    const dir = makeProject({ 'monitoring.config.ts': exampleConfig })
    for (const leg of matrix) {
      const check = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, { ...unsetSecrets, MONITORS_ENV: leg.environment, SECRETS: leg.secrets })
      expect(check.code).toBe(1)
      expect(check.output).toContain(`${leg.secrets}_API_URL ${leg.secrets}_READ_KEY API_TOKEN`)
      const ok = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, {
        ...unsetSecrets,
        MONITORS_ENV: leg.environment,
        SECRETS: leg.secrets,
        [`${leg.secrets}_API_URL`]: 'https://api.example.com',
        MONITORING_API_KEY: 'k',
        API_TOKEN: 't',
      })
      expect(ok.code, ok.output).toBe(0)
    }
    const main = await runStep(script(job('plan'), 'Check the secrets'), dir, { ...unsetSecrets, STAGING_READ_KEY: '', PRODUCTION_READ_KEY: '' })
    expect(main.code).toBe(1)
    expect(main.output).toContain('STAGING_API_URL STAGING_READ_KEY PRODUCTION_API_URL PRODUCTION_READ_KEY API_TOKEN')
  })

  it('plans with exit code 1 (never against another target or a throwaway server) when a URL secret is unset', async () => {
    const dir = makeProject({
      'monitoring.config.ts': exampleConfig,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
    // staging's secrets unset; production's set (they must never stand in for staging's)
    const env = { ...unsetSecrets, PRODUCTION_API_URL: 'http://127.0.0.1:9', PRODUCTION_ACCOUNT_ID: 'prod', MONITORING_API_KEY: 'k', MONITORS_ENV: 'staging' }
    for (const [name, stepName] of [
      ['pr-plan', 'Plan'],
      ['plan', 'Plan staging'],
    ]) {
      const plan = await runAction(job(name), stepName, dir, env)
      expect(plan.code).toBe(1)
      expect(plan.github, plan.output).toContain('exitcode=1')
      expect(plan.output).toContain('environments.staging.api.baseUrl, environments.staging.api.accountId are empty (an unset secret in CI?)')
      expect(plan.output).not.toContain('embedded local server (')
      expect(plan.output).not.toContain('127.0.0.1:9')
      // the run's summary (and a pull request's comment) shows the problems, not an older plan
      expect(plan.summary).toMatch(/^### monitors plan: staging\n/)
    }
  })

  it("posts each environment's plan on the pull request, replacing its own comment on every run, also when the plan fails", async () => {
    const github = await fakeGitHub()
    const dir = makeProject({
      'monitoring.config.ts': exampleConfig,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
    const event = join(dir, 'event.json')
    writeFileSync(event, JSON.stringify({ pull_request: { number: 7 } }))
    const pr = job('pr-plan')
    expect(step(pr, 'Plan')).toMatch(/^\s+if: \$\{\{ !cancelled\(\) \}\}$/m)
    const context = {
      GITHUB_EVENT_PATH: event,
      GITHUB_API_URL: github.url,
      GITHUB_REPOSITORY: 'team/shop',
      GITHUB_SHA: 'abcdef0123456',
      GITHUB_SERVER_URL: 'https://github.example.com',
      GITHUB_RUN_ID: '42',
    }
    try {
      for (const leg of matrix) {
        // the secrets unset: the plan fails, and the comment says why
        const failed = await runAction(pr, 'Plan', dir, { ...unsetSecrets, ...context, MONITORS_ENV: leg.environment, SECRETS: leg.secrets })
        expect(failed.code).toBe(1)
        expect(failed.output).toContain('plan comment created on pull request #7')
      }
      expect(github.comments.map((c) => c.body.split('\n')[0])).toEqual(['<!-- monitors-plan:staging -->', '<!-- monitors-plan:production -->'])
      expect(github.comments[0].body).toContain('### monitors plan: staging')
      expect(github.comments[0].body).toContain('are empty (an unset secret in CI?)')
      expect(github.comments[0].body).toContain('abcdef0 · [run](https://github.example.com/team/shop/actions/runs/42)')

      const server = await startLocalServer({ apiKeys: [{ key: STAGING_READ, accountId: 'stg', role: 'read' }] })
      try {
        const env = {
          ...unsetSecrets,
          ...context,
          STAGING_API_URL: server.url,
          STAGING_ACCOUNT_ID: 'stg',
          API_TOKEN: 't',
          MONITORS_ENV: 'staging',
          SECRETS: 'STAGING',
          MONITORING_API_KEY: STAGING_READ,
        }
        const planned = await runAction(pr, 'Plan', dir, env)
        expect(planned.code, planned.output).toBe(0)
        expect(planned.github).toContain('exitcode=2')
        expect(planned.github).toContain('changes=true')
        expect(planned.output).toContain('plan comment replaced on pull request #7')
      } finally {
        await server.close()
      }
      // still one comment per environment: staging's now holds the plan, production's its problems
      expect(github.comments).toHaveLength(2)
      expect(github.comments[0].body).toContain('### monitors plan: staging')
      expect(github.comments[0].body).not.toContain('are empty')
      expect(github.comments[1].body).toContain('are empty (an unset secret in CI?)')
      expect(github.seen.every((line) => line.endsWith('Bearer gh-token'))).toBe(true)
      expect(github.comments.map((c) => c.body).join('\n')).not.toContain(STAGING_READ)
    } finally {
      await github.close()
    }
  })

  it('passes the secrets and the values EnvVars read, and runs on changes to packages, the locks and helper modules', () => {
    for (const name of ['STAGING_API_URL', 'STAGING_ACCOUNT_ID', 'PRODUCTION_API_URL', 'PRODUCTION_ACCOUNT_ID', 'API_TOKEN']) {
      expect(workflow).toContain(`${name}: \${{ secrets.${name} }}`)
    }
    for (const path of ["'**/*.ts'", "'monitoring.*.lock.json'", "'package.json'", "'package-lock.json'"]) {
      expect(workflow.split(path).length - 1, path).toBe(2)
    }
    // the matrix names both environments, and each leg runs for its own
    expect(job('pr-plan')).toContain('MONITORS_ENV: ${{ matrix.environment }}')
    for (const leg of matrix) expect(job('pr-plan')).toContain(`- { environment: ${leg.environment}, secrets: ${leg.secrets} }`)
  })

  it('plans each environment with its read key, and applies each with a write key only its apply job gets, staging first', async () => {
    expect(job('pr-plan')).toContain("MONITORING_API_KEY: ${{ secrets[format('{0}_READ_KEY', matrix.secrets)] }}")
    expect(keySecret(step(job('plan'), 'Plan staging'))).toBe('STAGING_READ_KEY')
    expect(keySecret(step(job('plan'), 'Plan production'))).toBe('PRODUCTION_READ_KEY')
    for (const environment of ['staging', 'production']) {
      const apply = job(`apply-${environment}`)
      expect(keySecret(apply)).toBe('MONITORING_WRITE_KEY')
      expect(apply).toContain(`environment: monitors-${environment}`)
      expect(constant(apply, 'MONITORS_ENV')).toBe(environment)
    }
    // one write key per GitHub environment, named only by the apply jobs
    expect(workflow.match(/MONITORING_WRITE_KEY \}\}/g)).toHaveLength(2)
    expect(job('apply-production')).toContain('needs: [plan, apply-staging]')

    const server = await startLocalServer({
      apiKeys: [
        { key: STAGING_READ, accountId: 'stg', role: 'read' },
        { key: STAGING_WRITE, accountId: 'stg', role: 'write' },
        { key: PRODUCTION_READ, accountId: 'prod', role: 'read' },
        { key: PRODUCTION_WRITE, accountId: 'prod', role: 'write' },
      ],
    })
    try {
      const secrets: Record<string, string> = {
        STAGING_API_URL: server.url,
        STAGING_ACCOUNT_ID: 'stg',
        PRODUCTION_API_URL: server.url,
        PRODUCTION_ACCOUNT_ID: 'prod',
        API_TOKEN: 't',
        STAGING_READ_KEY: STAGING_READ,
        PRODUCTION_READ_KEY: PRODUCTION_READ,
      }
      const writeKeys: Record<string, string> = { staging: STAGING_WRITE, production: PRODUCTION_WRITE }
      const dir = makeProject({
        'monitoring.config.ts': exampleConfig,
        'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'From the pipeline', request: { query: 'a.example.com' } })\n`,
      })
      const list = async (key: string) =>
        (await caller(server, key)('GET', '/v1/checks')).json.map((c: { name: string; frequency: number }) => `${c.name} ${c.frequency}`)

      for (const leg of matrix) {
        const env = { ...secrets, MONITORS_ENV: leg.environment, SECRETS: leg.secrets, MONITORING_API_KEY: secrets[`${leg.secrets}_READ_KEY`] }
        const pr = await runAction(job('pr-plan'), 'Plan', dir, env)
        expect(pr.github, pr.output).toContain('exitcode=2')
        const md = pr.summary
        expect(md).toMatch(new RegExp(`^### monitors plan: ${leg.environment}\n`))
        expect(md).toContain('From the pipeline')
      }

      // main: both plans, each step with its own environment and key
      for (const environment of ['staging', 'production']) {
        const name = `Plan ${environment}`
        const stepText = step(job('plan'), name)
        const env = { ...secrets, MONITORING_API_KEY: secrets[keySecret(stepText)] }
        const plan = await runAction(job('plan'), name, dir, env)
        expect(plan.code, plan.output).toBe(0)
        expect(plan.summary).toMatch(new RegExp(`^### monitors plan: ${environment}\n`))
        expect(plan.github, plan.output).toContain('exitcode=2')
        expect(JSON.parse(readFileSync(join(dir, `plan-${environment}.json`), 'utf8')).plan.environment).toBe(environment)
      }

      // a read key could not have applied it (tried on a copy of the checkout: the apply job's own is fresh)
      const copy = mkdtempSync(join(tmpdir(), 'monitors-apply-read-'))
      cpSync(dir, copy, { recursive: true, verbatimSymlinks: true })
      const refused = await runAction(job('apply-staging'), 'Apply the reviewed plan', copy, {
        ...secrets,
        MONITORS_ENV: 'staging',
        MONITORING_API_KEY: STAGING_READ,
      })
      expect(refused.code).toBe(1)
      expect(refused.output).toContain('403 Forbidden')
      expect(refused.output).not.toContain(STAGING_READ)
      expect(await list(STAGING_READ)).toEqual([])
      // one environment's plan is never applied as the other's: refused before anything is sent
      const crossed = await runStep(cli('npx monitors apply plan-production.json'), copy, {
        ...secrets,
        MONITORS_ENV: 'staging',
        MONITORING_API_KEY: STAGING_WRITE,
      })
      expect(crossed.code).toBe(1)
      expect(crossed.output).toContain('the plan was made for the environment "production", but this run is for the environment "staging"')
      expect(await list(STAGING_READ)).toEqual([])

      for (const environment of ['staging', 'production']) {
        const apply = job(`apply-${environment}`)
        const env = { ...secrets, MONITORS_ENV: constant(apply, 'MONITORS_ENV'), MONITORING_API_KEY: writeKeys[environment] }
        const check = await runStep(script(apply, 'Check the secrets'), dir, env)
        expect(check.code, check.output).toBe(0)
        const run = await runAction(apply, 'Apply the reviewed plan', dir, env)
        expect(run.code, run.output).toBe(0)
        expect(run.summary).toContain(`### monitors apply: ${environment}`)
        // the lock the commit step adds is the one this apply wrote, and it records its environment
        const lock = /^lock="(.+)"$/m.exec(script(apply, 'Commit the lock file back'))?.[1]?.replace('$MONITORS_ENV', environment)
        expect(lock).toBe(`monitoring.${environment}.lock.json`)
        expect(JSON.parse(readFileSync(join(dir, lock as string), 'utf8')).environment).toBe(environment)
      }
      // each environment's service got its own check, with the environment's defaults (staging: every 60 minutes)
      expect(await list(STAGING_READ)).toEqual(['From the pipeline 60'])
      expect(await list(PRODUCTION_READ)).toEqual([expect.stringMatching(/^From the pipeline (?!60$)\d+$/)])
    } finally {
      await server.close()
    }
    // a dozen CLI runs, each its own process
  }, 60_000)

  it('says so when an apply job has no write key', async () => {
    for (const environment of ['staging', 'production']) {
      const apply = job(`apply-${environment}`)
      const check = await runStep(script(apply, 'Check the secrets'), makeProject({}), { ...unsetSecrets, MONITORS_ENV: constant(apply, 'MONITORS_ENV') })
      expect(check.code).toBe(1)
      expect(check.output).toContain(`The secret MONITORING_WRITE_KEY is not set in the environment monitors-${environment}`)
    }
  })

  it('applies exactly the saved plans, from the commit they were made from, production after staging', () => {
    const plan = job('plan')
    expect(plan).toContain('actions/upload-artifact')
    for (const environment of ['staging', 'production']) {
      expect(actionInputs(step(plan, `Plan ${environment}`), {})).toEqual({
        command: 'plan',
        environment,
        'plan-file': `plan-${environment}.json`,
        comment: 'false',
      })
      const apply = job(`apply-${environment}`)
      expect(apply).toContain('actions/download-artifact')
      expect(actionInputs(step(apply, 'Apply the reviewed plan'), {})).toEqual({ command: 'apply', environment, 'plan-file': `plan-${environment}.json` })
      expect(apply).toContain("ref: '${{ needs.plan.outputs.sha }}'")
      expect(apply).toContain(`needs.plan.outputs.${environment} == '2'`)
    }
    // production waits for staging's apply, and never runs after it failed
    expect(job('apply-production')).toContain("(needs.apply-staging.result == 'success' || needs.apply-staging.result == 'skipped')")
    expect(workflow).not.toMatch(/monitors apply --yes/)
  })

  it('retries a commit-back push that fails, and explains why a lost lock commit is safe', () => {
    const commit = script(job('apply-staging'), 'Commit the lock file back')
    expect(commit).toContain('git pull --rebase')
    expect(commit).toMatch(/lock commit is lost, and that is safe/)
    expect(commit).toMatch(/existing remote resource with the same identity/)
    expect(script(job('apply-production'), 'Commit the lock file back')).toContain('git pull --rebase')
  })
})
