/**
 * The GitHub Actions example is safe as written: its steps are run here as the runner would
 * run them (bash, the workflow's env with secrets unset turned into empty strings, CI=true).
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

const READ_KEY = 'read-key-0123456789abcdef0123456789'
const WRITE_KEY = 'write-key-0123456789abcdef012345678'

const exec = promisify(execFile)
const workflow = readFileSync(join(repo, 'examples/github-actions/.github/workflows/monitors.yml'), 'utf8')

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

const unsetSecrets = { MONITORING_API_URL: '', MONITORING_API_KEY: '', MONITORING_ACCOUNT_ID: '', API_TOKEN: '' }

/** The repository or environment secret a job passes as MONITORING_API_KEY. */
function keySecret(jobText: string): string {
  const name = /^\s+MONITORING_API_KEY: \$\{\{ secrets\.([A-Z_]+) \}\}$/m.exec(jobText)?.[1]
  expect(name, jobText).toBeDefined()
  return name as string
}

/** The one-line `run:` of the step named `step` in `jobText`. */
function runLine(jobText: string, step: string): string {
  const lines = jobText.split('\n')
  const at = lines.findIndex((l) => l.trim() === `- name: ${step}`)
  expect(at, `step ${step}`).toBeGreaterThan(-1)
  const run = lines.slice(at).find((l) => /^\s+run: \S/.test(l)) as string
  return run.replace(/^\s+run: /, '')
}

const cli = (text: string) => text.replaceAll('npx monitors', `node ${join(repo, 'bin/monitors.cjs')}`)

describe('the GitHub Actions example', () => {
  it('fails on missing secrets, naming each', async () => {
    const dir = makeProject({})
    const check = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, unsetSecrets)
    expect(check.code).toBe(1)
    expect(check.output).toContain('MONITORING_API_URL MONITORING_READ_KEY API_TOKEN')
    const ok = await runStep(script(job('pr-plan'), 'Check the secrets'), dir, { MONITORING_API_URL: 'https://api.example.com', MONITORING_API_KEY: 'k', API_TOKEN: 't' })
    expect(ok.code, ok.output).toBe(0)
  })

  it('plans with exit code 1 (never against a throwaway server) when the URL secret is unset', async () => {
    const dir = makeProject({ 'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n` })
    for (const [name, step] of [['pr-plan', 'Plan'], ['plan', 'Plan']]) {
      const plan = await runStep(script(job(name), step).replaceAll('npx monitors', `node ${join(repo, 'bin/monitors.cjs')}`), dir, unsetSecrets)
      expect(plan.github, plan.output).toContain('exitcode=1')
      expect(plan.output).toContain('MONITORING_API_URL is set but empty')
      expect(plan.output).not.toContain('embedded local server (')
    }
  })

  it('passes the secrets and the values EnvVars read, and runs on changes to packages, the lock and helper modules', () => {
    for (const name of ['MONITORING_API_URL', 'MONITORING_ACCOUNT_ID', 'API_TOKEN']) {
      expect(workflow).toContain(`${name}: \${{ secrets.${name} }}`)
    }
    for (const path of ["'**/*.ts'", "'monitoring.lock.json'", "'package.json'", "'package-lock.json'"]) {
      expect(workflow.split(path).length - 1, path).toBe(2)
    }
  })

  it('plans pull requests and main with a read key, and applies on main with a write key that only the apply job gets', async () => {
    expect(keySecret(job('pr-plan'))).toBe('MONITORING_READ_KEY')
    expect(keySecret(job('plan'))).toBe('MONITORING_READ_KEY')
    expect(keySecret(job('apply'))).toBe('MONITORING_WRITE_KEY')
    expect(job('apply')).toContain('environment: monitors')
    expect(workflow.match(/MONITORING_WRITE_KEY \}\}/g)).toHaveLength(1)

    const server = await startLocalServer({ apiKeys: [
      { key: READ_KEY, accountId: 'ci', role: 'read' },
      { key: WRITE_KEY, accountId: 'ci', role: 'write' },
    ] })
    try {
      const secrets: Record<string, string> = { MONITORING_READ_KEY: READ_KEY, MONITORING_WRITE_KEY: WRITE_KEY }
      const env = (name: string) => ({ MONITORING_API_URL: server.url, MONITORING_ACCOUNT_ID: 'ci', MONITORING_API_KEY: secrets[keySecret(job(name))], API_TOKEN: 't' })
      const dir = makeProject({ 'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'From the pipeline', request: { query: 'a.example.com' } })\n` })

      const pr = await runStep(cli(script(job('pr-plan'), 'Plan')), dir, env('pr-plan'))
      expect(pr.github, pr.output).toContain('exitcode=2')
      expect(readFileSync(join(dir, 'plan.md'), 'utf8')).toContain('From the pipeline')

      const plan = await runStep(cli(script(job('plan'), 'Plan')), dir, env('plan'))
      expect(plan.github, plan.output).toContain('exitcode=2')
      // the read key could not have applied it (tried on a copy of the checkout: the apply job's own is fresh)
      const copy = mkdtempSync(join(tmpdir(), 'monitors-apply-read-'))
      cpSync(dir, copy, { recursive: true, verbatimSymlinks: true })
      const refused = await runStep(cli(runLine(job('apply'), 'Apply the reviewed plan')), copy, env('plan'))
      expect(refused.code).toBe(1)
      expect(refused.output).toContain('403 Forbidden')
      expect(refused.output).not.toContain(READ_KEY)
      const list = async () => (await caller(server, READ_KEY)('GET', '/v1/checks')).json.map((c: { name: string }) => c.name)
      expect(await list()).toEqual([])

      const check = await runStep(script(job('apply'), 'Check the secrets'), dir, env('apply'))
      expect(check.code, check.output).toBe(0)
      const apply = await runStep(cli(runLine(job('apply'), 'Apply the reviewed plan')), dir, env('apply'))
      expect(apply.code, apply.output).toBe(0)
      expect(await list()).toEqual(['From the pipeline'])
    } finally {
      await server.close()
    }
  })

  it('says so when the apply job has no write key', async () => {
    const check = await runStep(script(job('apply'), 'Check the secrets'), makeProject({}), unsetSecrets)
    expect(check.code).toBe(1)
    expect(check.output).toContain('The secret MONITORING_WRITE_KEY is not set in the environment monitors')
  })

  it('applies exactly the saved plan, from the commit it was made from', () => {
    expect(job('plan')).toContain('npx monitors plan --format markdown --detailed-exitcode --out plan.json')
    expect(job('plan')).toContain('actions/upload-artifact')
    const apply = job('apply')
    expect(apply).toContain('actions/download-artifact')
    expect(apply).toContain('run: npx monitors apply plan.json')
    expect(apply).toContain("ref: '${{ needs.plan.outputs.sha }}'")
    expect(workflow).not.toMatch(/monitors apply --yes/)
  })

  it('replaces the pull-request comment also when the plan failed, then fails the job', () => {
    const pr = job('pr-plan')
    const post = pr.slice(pr.indexOf('- name: Post the plan'))
    expect(post).toMatch(/^\s+if: always\(\)$/m)
    expect(post).toContain('updateComment')
    expect(pr).toContain("if: steps.plan.outputs.exitcode == '1'")
  })

  it('retries a commit-back push that fails, and explains why a lost lock commit is safe', () => {
    const commit = script(job('apply'), 'Commit the lock file back')
    expect(commit).toContain('git pull --rebase')
    expect(commit).toMatch(/lock commit is lost, and that is safe/)
    expect(commit).toMatch(/existing remote resource with the same identity/)
  })
})
