/**
 * The GitHub Actions example is safe as written: its steps are run here as the runner would
 * run them (bash, the workflow's env with secrets unset turned into empty strings, CI=true),
 * against the config its README shows (two environments, staging and production).
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs'
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
    const result = await exec('bash', ['-e', '-c', text], { cwd, env: { ...base, PATH: path, NO_COLOR: '1', CI: 'true', GITHUB_OUTPUT: output, GITHUB_STEP_SUMMARY: join(cwd, 'summary'), ...env } })
    return { code: 0, output: result.stdout + result.stderr, github: github() }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}`, github: github() }
  }
}

/** The secrets, all unset (GitHub Actions turns them into empty strings). */
const unsetSecrets = {
  STAGING_API_URL: '', STAGING_ACCOUNT_ID: '', PRODUCTION_API_URL: '', PRODUCTION_ACCOUNT_ID: '', MONITORING_API_KEY: '', API_TOKEN: '',
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

/** The one-line `run:` of the step named `step` in `jobText`. */
function runLine(jobText: string, name: string): string {
  const run = step(jobText, name).split('\n').find((l) => /^\s+run: \S/.test(l)) as string
  return run.replace(/^\s+run: /, '')
}

const cli = (text: string) => text.replaceAll('npx monitors', `node ${join(repo, 'bin/monitors.cjs')}`)

/** The pull-request matrix: each environment with the prefix of its secrets. */
const matrix = [{ environment: 'staging', secrets: 'STAGING' }, { environment: 'production', secrets: 'PRODUCTION' }]

describe('the GitHub Actions example', () => {
  it('fails on missing secrets, naming each', async () => {
    const dir = makeProject({ 'monitoring.config.ts': exampleConfig })
    for (const leg of matrix) {
      const check = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, { ...unsetSecrets, MONITORS_ENV: leg.environment, SECRETS: leg.secrets })
      expect(check.code).toBe(1)
      expect(check.output).toContain(`${leg.secrets}_API_URL ${leg.secrets}_READ_KEY API_TOKEN`)
      const ok = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, {
        ...unsetSecrets, MONITORS_ENV: leg.environment, SECRETS: leg.secrets, [`${leg.secrets}_API_URL`]: 'https://api.example.com', MONITORING_API_KEY: 'k', API_TOKEN: 't',
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
    for (const [name, stepName] of [['pr-plan', 'Plan'], ['plan', 'Plan staging']]) {
      const plan = await runStep(cli(script(job(name), stepName)), dir, env)
      expect(plan.github, plan.output).toContain('exitcode=1')
      expect(plan.output).toContain('environments.staging.api.baseUrl, environments.staging.api.accountId are empty (an unset secret in CI?)')
      expect(plan.output).not.toContain('embedded local server (')
      expect(plan.output).not.toContain('127.0.0.1:9')
    }
    expect(readFileSync(join(dir, 'plan.md'), 'utf8')).toMatch(/^### monitors plan: staging\n/)
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

    const server = await startLocalServer({ apiKeys: [
      { key: STAGING_READ, accountId: 'stg', role: 'read' },
      { key: STAGING_WRITE, accountId: 'stg', role: 'write' },
      { key: PRODUCTION_READ, accountId: 'prod', role: 'read' },
      { key: PRODUCTION_WRITE, accountId: 'prod', role: 'write' },
    ] })
    try {
      const secrets: Record<string, string> = {
        STAGING_API_URL: server.url, STAGING_ACCOUNT_ID: 'stg', PRODUCTION_API_URL: server.url, PRODUCTION_ACCOUNT_ID: 'prod', API_TOKEN: 't',
        STAGING_READ_KEY: STAGING_READ, PRODUCTION_READ_KEY: PRODUCTION_READ,
      }
      const writeKeys: Record<string, string> = { staging: STAGING_WRITE, production: PRODUCTION_WRITE }
      const dir = makeProject({
        'monitoring.config.ts': exampleConfig,
        'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'From the pipeline', request: { query: 'a.example.com' } })\n`,
      })
      const list = async (key: string) => (await caller(server, key)('GET', '/v1/checks')).json.map((c: { name: string; frequency: number }) => `${c.name} ${c.frequency}`)

      for (const leg of matrix) {
        const env = { ...secrets, MONITORS_ENV: leg.environment, SECRETS: leg.secrets, MONITORING_API_KEY: secrets[`${leg.secrets}_READ_KEY`] }
        const pr = await runStep(cli(script(job('pr-plan'), 'Plan')), dir, env)
        expect(pr.github, pr.output).toContain('exitcode=2')
        const md = readFileSync(join(dir, 'plan.md'), 'utf8')
        expect(md).toMatch(new RegExp(`^### monitors plan: ${leg.environment}\n`))
        expect(md).toContain('From the pipeline')
      }

      // main: both plans, each step with its own environment and key
      for (const environment of ['staging', 'production']) {
        const name = `Plan ${environment}`
        const stepText = step(job('plan'), name)
        const env = { ...secrets, MONITORS_ENV: constant(stepText, 'MONITORS_ENV'), MONITORING_API_KEY: secrets[keySecret(stepText)] }
        const plan = await runStep(cli(script(job('plan'), name)), dir, env)
        expect(plan.github, plan.output).toContain('exitcode=2')
        expect(JSON.parse(readFileSync(join(dir, `plan-${environment}.json`), 'utf8')).plan.environment).toBe(environment)
      }

      // a read key could not have applied it (tried on a copy of the checkout: the apply job's own is fresh)
      const copy = mkdtempSync(join(tmpdir(), 'monitors-apply-read-'))
      cpSync(dir, copy, { recursive: true, verbatimSymlinks: true })
      const refused = await runStep(cli(runLine(job('apply-staging'), 'Apply the reviewed plan')), copy, { ...secrets, MONITORS_ENV: 'staging', MONITORING_API_KEY: STAGING_READ })
      expect(refused.code).toBe(1)
      expect(refused.output).toContain('403 Forbidden')
      expect(refused.output).not.toContain(STAGING_READ)
      expect(await list(STAGING_READ)).toEqual([])
      // one environment's plan is never applied as the other's: refused before anything is sent
      const crossed = await runStep(cli('npx monitors apply plan-production.json'), copy, { ...secrets, MONITORS_ENV: 'staging', MONITORING_API_KEY: STAGING_WRITE })
      expect(crossed.code).toBe(1)
      expect(crossed.output).toContain('the plan was made for the environment "production", but this run is for the environment "staging"')
      expect(await list(STAGING_READ)).toEqual([])

      for (const environment of ['staging', 'production']) {
        const apply = job(`apply-${environment}`)
        const env = { ...secrets, MONITORS_ENV: constant(apply, 'MONITORS_ENV'), MONITORING_API_KEY: writeKeys[environment] }
        const check = await runStep(script(apply, 'Check the secrets'), dir, env)
        expect(check.code, check.output).toBe(0)
        const run = await runStep(cli(runLine(apply, 'Apply the reviewed plan')), dir, env)
        expect(run.code, run.output).toBe(0)
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
  })

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
    expect(plan).toContain('npx monitors plan --format markdown --detailed-exitcode --out plan-staging.json')
    expect(plan).toContain('npx monitors plan --format markdown --detailed-exitcode --out plan-production.json')
    expect(plan).toContain('actions/upload-artifact')
    for (const environment of ['staging', 'production']) {
      const apply = job(`apply-${environment}`)
      expect(apply).toContain('actions/download-artifact')
      expect(apply).toContain('run: npx monitors apply plan-$MONITORS_ENV.json')
      expect(apply).toContain("ref: '${{ needs.plan.outputs.sha }}'")
      expect(apply).toContain(`needs.plan.outputs.${environment} == '2'`)
    }
    // production waits for staging's apply, and never runs after it failed
    expect(job('apply-production')).toContain("(needs.apply-staging.result == 'success' || needs.apply-staging.result == 'skipped')")
    expect(workflow).not.toMatch(/monitors apply --yes/)
  })

  it('replaces each environment\'s pull-request comment also when the plan failed, then fails the job', () => {
    const pr = job('pr-plan')
    const post = pr.slice(pr.indexOf('- name: Post the plan'))
    expect(post).toMatch(/^\s+if: always\(\)$/m)
    expect(post).toContain('updateComment')
    expect(post).toContain('const marker = `<!-- monitors-plan:${process.env.MONITORS_ENV} -->`')
    expect(pr).toContain("if: steps.plan.outputs.exitcode == '1'")
  })

  it('retries a commit-back push that fails, and explains why a lost lock commit is safe', () => {
    const commit = script(job('apply-staging'), 'Commit the lock file back')
    expect(commit).toContain('git pull --rebase')
    expect(commit).toMatch(/lock commit is lost, and that is safe/)
    expect(commit).toMatch(/existing remote resource with the same identity/)
    expect(script(job('apply-production'), 'Commit the lock file back')).toContain('git pull --rebase')
  })
})
