import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { UserError } from '../errors.js'
import { ENVIRONMENT_NAME } from './config.js'

/** A new project's files: what `monitors init` writes. */
export interface ScaffoldResult {
  written: string[]
  /** Files that already existed and were left as they are (never overwritten). */
  skipped: string[]
  gitignore: 'created' | 'appended' | 'unchanged'
  /** Lines added to .gitignore (all of them when it was created). */
  gitignoreLines: string[]
}

export class ScaffoldError extends UserError {}

const GITIGNORE_LINES = ['node_modules/', '.monitors/']

/**
 * So that `npx tsc --noEmit` type-checks the config and the check files (helper modules come
 * along through their imports). Bundler resolution: imports need no `.js` extension and the
 * project's package.json needs no `"type": "module"`; nothing is emitted (jiti runs the files).
 * `types: ["node"]`: TypeScript 7 no longer loads every `@types` package by default, and the
 * config reads `process.env` (TypeScript 5 reads the same list the same way).
 */
export const TSCONFIG_TEXT = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'ESNext',
      moduleResolution: 'bundler',
      allowImportingTsExtensions: true,
      resolveJsonModule: true,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    },
    include: ['monitoring.config.ts', '**/*.check.ts'],
  },
  null,
  2,
)}\n`

/** The `environments` block of a new config: each name with its own lock file, overrides left to the user. */
function environmentsText(names: readonly string[]): string {
  if (names.length === 0) return ''
  const entries = names.map((name) => `    ${/^[a-z_][a-z0-9_]*$/.test(name) ? name : JSON.stringify(name)}: {},`).join('\n')
  return `  // One target per environment: every command takes --env NAME (or MONITORS_ENV), and each
  // environment keeps its own lock file (monitoring.<name>.lock.json). An environment may set its
  // own api (e.g. api: { baseUrl: process.env.STAGING_API_URL }; else the api above, then
  // MONITORING_API_URL) and override defaults (e.g. defaults: { frequency: 60 }); a check's own
  // props still win. In a check file, currentEnvironment() says which one is being loaded.
  environments: {
${entries}
  },
`
}

function configText(projectName: string, environments: readonly string[] = []): string {
  return `import { defineConfig } from 'monitors-as-code'

export default defineConfig({
  projectName: ${JSON.stringify(projectName)},
  checkMatch: '**/*.check.ts',
  defaults: {
    frequency: 10,
    locations: ['eu-west-1', 'us-east-1'],
    tags: [${JSON.stringify(projectName)}],
  },
  // With no base URL, monitors runs its embedded local server (.monitors/local.db); in CI
  // (CI set) only with --local or baseUrl: 'local', so a missing secret never deploys to it.
  api: {
    baseUrl: process.env.MONITORING_API_URL,
    accountId: process.env.MONITORING_ACCOUNT_ID,
  },
${environmentsText(environments)}})
`
}

const EXAMPLE_CHECK = `import { DnsCheck, IcmpCheck } from 'monitors-as-code'

// Resolves the site's A record every 10 minutes and fails unless the answer is NOERROR.
new DnsCheck('website-dns', {
  name: 'Website DNS',
  request: {
    query: 'example.com',
    recordType: 'A',
    assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
  },
})

// Pings the host and degrades above 10 % packet loss, fails above 20 %.
new IcmpCheck('website-ping', {
  name: 'Website ping',
  request: {
    hostname: 'example.com',
    assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '200' }],
  },
})
`

/** Adds the lines of GITIGNORE_LINES that `dir`'s .gitignore lacks (creating it when there is none). */
export function ensureGitignore(dir: string): Pick<ScaffoldResult, 'gitignore' | 'gitignoreLines'> {
  const gitignoreFile = join(dir, '.gitignore')
  if (!existsSync(gitignoreFile)) {
    writeFileSync(gitignoreFile, `${GITIGNORE_LINES.join('\n')}\n`)
    return { gitignore: 'created', gitignoreLines: GITIGNORE_LINES }
  }
  const current = readFileSync(gitignoreFile, 'utf8')
  const present = new Set(current.split(/\r?\n/).map((l) => l.trim()))
  const missing = GITIGNORE_LINES.filter((l) => !present.has(l) && !present.has(l.replace(/\/$/, '')))
  if (missing.length === 0) return { gitignore: 'unchanged', gitignoreLines: [] }
  writeFileSync(gitignoreFile, `${current}${current.endsWith('\n') || current === '' ? '' : '\n'}${missing.join('\n')}\n`)
  return { gitignore: 'appended', gitignoreLines: missing }
}

/**
 * Writes a config, one example check file, a tsconfig.json and the .gitignore lines into `dir`.
 * Refuses, and writes nothing, when the config or the example file already exists; an existing
 * tsconfig.json is left alone (reported as skipped), an existing .gitignore only gains the
 * missing lines.
 */
export function scaffoldProject(dir: string, options: { projectName?: string; environments?: readonly string[] } = {}): ScaffoldResult {
  const projectName = options.projectName ?? (basename(dir).replace(/[^A-Za-z0-9_-]+/g, '-') || 'monitors')
  const environments = [...new Set(options.environments ?? [])]
  const bad = environments.filter((name) => !ENVIRONMENT_NAME.test(name))
  if (bad.length > 0) {
    throw new ScaffoldError(
      `--env ${bad.map((b) => JSON.stringify(b)).join(', ')}: an environment's name is lower-case letters, digits, - and _ (at most 40 characters, starting with a letter or a digit), e.g. staging.`,
    )
  }
  const files: Array<[string, string]> = [
    [join(dir, 'monitoring.config.ts'), configText(projectName, environments)],
    [join(dir, 'checks', 'website.check.ts'), EXAMPLE_CHECK],
  ]
  for (const existing of ['monitoring.config.ts', 'monitoring.config.mts', 'monitoring.config.js', 'monitoring.config.mjs']) {
    if (existsSync(join(dir, existing))) {
      throw new ScaffoldError(
        `${relative(process.cwd(), join(dir, existing)) || existing} already exists; monitors init never overwrites files. Remove it or run init in another directory.`,
      )
    }
  }
  const taken = files.filter(([file]) => existsSync(file))
  if (taken.length > 0) {
    throw new ScaffoldError(
      `${taken.map(([f]) => relative(process.cwd(), f)).join(', ')} already exists; monitors init never overwrites files. Remove it or run init in another directory.`,
    )
  }
  for (const [file, text] of files) {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text, { flag: 'wx' })
  }
  // optional files: written when absent, never overwritten
  const written = files.map(([f]) => f)
  const skipped: string[] = []
  const tsconfig = join(dir, 'tsconfig.json')
  if (existsSync(tsconfig)) skipped.push(tsconfig)
  else {
    writeFileSync(tsconfig, TSCONFIG_TEXT, { flag: 'wx' })
    written.push(tsconfig)
  }
  const { gitignore, gitignoreLines } = ensureGitignore(dir)
  return { written, skipped, gitignore, gitignoreLines }
}
