#!/usr/bin/env node
/**
 * The step of the GitHub Action (action.yml beside this folder), run by GitHub Actions with the
 * action's inputs as INPUT_* variables, in the input working-directory:
 *
 *   command: plan   `monitors plan --format markdown --detailed-exitcode [--out plan-file]`:
 *                   the plan (or the problems) in the run's summary and, on a pull request, in a
 *                   comment of its own per environment, replaced on every run (also when the plan
 *                   fails, so a pull request never shows a stale plan). Outputs exitcode (0 no
 *                   changes, 2 changes, 1 failed) and changes (true/false); the step fails only
 *                   when the plan failed.
 *   command: apply  `monitors apply <plan-file>`: exactly the reviewed plan, refused as stale when
 *                   anything changed since it was made; its output in the run's summary.
 *
 * The CLI is the project's own monitors-as-code (node_modules, as npm ci installed it), run with
 * the step's environment: MONITORING_* and the EnvVar values come from the workflow, the input
 * environment becomes MONITORS_ENV. The comment goes through GitHub's REST API
 * (GITHUB_API_URL) with the input github-token. Nothing here prints a key.
 */
import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'

const env = process.env
const input = (name) => (env[`INPUT_${name.toUpperCase().replace(/-/g, '_')}`] ?? '').trim()

function fail(message) {
  process.stdout.write(`::error::${message.replace(/\r?\n/g, ' ')}\n`)
  process.exit(1)
}

/** The project's monitors CLI: node_modules/monitors-as-code/bin/monitors.cjs, found from the working directory. */
function cliPath() {
  try {
    const manifest = createRequire(join(process.cwd(), 'package.json')).resolve('monitors-as-code/package.json')
    return resolve(manifest, '..', 'bin', 'monitors.cjs')
  } catch {
    return fail(
      `monitors-as-code is not installed in ${process.cwd()}: run npm ci (with monitors-as-code in devDependencies) before this step, or set working-directory`,
    )
  }
}

function output(name, value) {
  if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, `${name}=${value}\n`)
}

function summary(text) {
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${text.trimEnd()}\n\n`)
}

/** Runs the CLI; stderr goes to the log as it comes, stdout is returned (and logged). */
function monitors(args) {
  const environment = input('environment')
  const result = spawnSync(process.execPath, [cliPath(), ...args], {
    env: { ...env, ...(environment ? { MONITORS_ENV: environment } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.error) fail(`could not run monitors: ${result.error.message}`)
  process.stdout.write(result.stdout)
  return { code: result.status ?? 1, stdout: result.stdout }
}

/** The pull request this run is for, from the event GitHub Actions saved; undefined on any other event. */
function pullRequest() {
  if (!env.GITHUB_EVENT_PATH || !existsSync(env.GITHUB_EVENT_PATH)) return undefined
  const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8'))
  return event.pull_request?.number ?? (event.issue?.pull_request ? event.issue.number : undefined)
}

async function github(method, path, body) {
  const base = env.GITHUB_API_URL
  if (!base) throw new Error('GITHUB_API_URL is not set (GitHub Actions sets it)')
  const answer = await fetch(`${base.replace(/\/+$/, '')}${path}`, {
    method,
    headers: {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${input('github-token')}`,
      'content-type': 'application/json',
      'x-github-api-version': '2022-11-28',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${(await answer.text()).slice(0, 300)}`)
  return { json: await answer.json(), next: /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1] }
}

/** Creates the comment of this environment's plan, or replaces it (found by its hidden marker). */
async function comment(number, plan) {
  const repository = env.GITHUB_REPOSITORY
  if (!repository) throw new Error('GITHUB_REPOSITORY is not set (GitHub Actions sets it)')
  const marker = `<!-- monitors-plan:${input('environment') || 'default'} -->`
  const run = env.GITHUB_SERVER_URL && env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL}/${repository}/actions/runs/${env.GITHUB_RUN_ID}` : undefined
  const footer = [env.GITHUB_SHA?.slice(0, 7), run ? `[run](${run})` : undefined].filter(Boolean).join(' · ')
  const body = `${marker}\n${plan}${footer ? `\n\n<sub>${footer}</sub>` : ''}`
  let path = `/repos/${repository}/issues/${number}/comments?per_page=100`
  let mine
  while (path && !mine) {
    const page = await github('GET', path)
    mine = page.json.find((c) => typeof c.body === 'string' && c.body.startsWith(marker))
    path = page.next ? page.next.replace(env.GITHUB_API_URL.replace(/\/+$/, ''), '') : undefined
  }
  if (mine) await github('PATCH', `/repos/${repository}/issues/comments/${mine.id}`, { body })
  else await github('POST', `/repos/${repository}/issues/${number}/comments`, { body })
  return mine ? 'replaced' : 'created'
}

async function plan() {
  const file = input('plan-file')
  const { code, stdout } = monitors(['plan', '--format', 'markdown', '--detailed-exitcode', ...(file ? ['--out', file] : [])])
  const environment = input('environment')
  const text = stdout.trim() || `### monitors plan${environment ? `: ${environment}` : ''}\n\n**The plan could not be made**; see the run's log.`
  summary(text)
  output('exitcode', code)
  output('changes', code === 2 ? 'true' : 'false')
  const number = pullRequest()
  if (input('comment') !== 'false' && number !== undefined) {
    try {
      process.stdout.write(`monitors: plan comment ${await comment(number, text)} on pull request #${number}\n`)
    } catch (error) {
      // a failed comment fails the step: a pull request must not show an older plan as current
      fail(`could not post the plan on pull request #${number}: ${error.message}`)
    }
  }
  if (code !== 0 && code !== 2) process.exit(1)
}

function apply() {
  const file = input('plan-file')
  if (!file) fail('command apply needs plan-file: the plan saved by a plan step (plan-file there too), reviewed, then applied exactly')
  if (!existsSync(file)) fail(`plan-file ${file} does not exist in ${process.cwd()}: download the artifact the plan step uploaded first`)
  const { code, stdout } = monitors(['apply', file, '--no-color'])
  summary(`### monitors apply${input('environment') ? `: ${input('environment')}` : ''}\n\n\`\`\`\n${stdout.trim()}\n\`\`\``)
  output('exitcode', code)
  process.exit(code)
}

const command = input('command')
if (command === 'plan') await plan()
else if (command === 'apply') apply()
else fail(`command must be plan or apply, got ${JSON.stringify(command)}`)
