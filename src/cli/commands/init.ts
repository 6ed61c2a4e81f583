import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { ensureGitignore, scaffoldProject } from '../../project/scaffold.js'
import { CHECKLY_CONFIG_FILE_NAMES } from '../../project/checkly-config.js'
import { io } from '../io.js'
import type { Command } from '../command.js'
import { toolVersion } from '../version.js'

/** Whether `name` resolves from `dir` (installed there or in a parent's node_modules). */
function installed(dir: string, name: string): boolean {
  try {
    createRequire(join(dir, 'noop.js')).resolve(`${name}/package.json`)
    return true
  } catch {
    return false
  }
}

/**
 * The next steps, naming only what `dir` is missing: monitors-as-code itself comes from the
 * registry the team publishes it to, or as a tarball made with npm run tarball (docs/install.md);
 * typescript and @types/node are what tsc --noEmit needs.
 */
export function nextSteps(dir: string, environments: readonly string[] = []): string {
  const lines: string[] = []
  if (!installed(dir, 'monitors-as-code')) {
    lines.push(
      `  npm install --save-dev monitors-as-code typescript @types/node   (monitors-as-code is not installed here; from your npm registry, or ./vendor/monitors-as-code-${toolVersion()}.tgz made by "npm run tarball" in a checkout of monitors: see its docs/install.md)`,
    )
  } else {
    const missing = ['typescript', '@types/node'].filter((name) => !installed(dir, name))
    if (missing.length > 0) lines.push(`  npm install --save-dev ${missing.join(' ')}   (for tsc --noEmit; not installed here yet)`)
  }
  const env = environments.length > 0 ? ` --env ${environments[0]}` : ''
  lines.push(`  npx monitors plan${env}${' '.repeat(Math.max(1, 8 - env.length))}(the embedded local server; in CI set MONITORING_API_URL or pass --local)`)
  lines.push('  npx tsc --noEmit         (type-checks the config and the check files)')
  return `\nNext:\n${lines.join('\n')}\n`
}

interface InitArgs {
  dir: string
  'project-name'?: string
  env?: string[]
  'from-checkly'?: boolean
}

/**
 * A repository with the hosted CLI's config: monitors reads it as it is, so init writes no config
 * of its own (one would take its place). `--from-checkly` adds the .gitignore lines and loads the
 * project, saying what it holds and what does not map.
 */
async function fromCheckly(dir: string, config: string, load: boolean): Promise<number> {
  const show = (f: string) => relative(process.cwd(), f) || f
  if (!load) {
    io().stderr.write(`${show(join(dir, config))} is here: monitors reads it as it is (its checks defaults, checkMatch, testMatch) and the check files import checkly/constructs unchanged, so init writes no monitoring.config.ts (it would take its place).
Run "npx monitors init --from-checkly" to add the .gitignore lines and see what the project holds, or "npx monitors validate". See docs/migrating-from-checkly.md.
`)
    return 0
  }
  const { gitignore, gitignoreLines } = ensureGitignore(dir)
  if (gitignore !== 'unchanged')
    io().stderr.write(`${gitignore === 'created' ? 'created' : 'updated'} ${show(join(dir, '.gitignore'))} (${gitignoreLines.join(', ')})
`)
  const { loadProject, ProjectError, formatProblem, summarizeResources } = await import('../../project/index.js')
  try {
    const project = await loadProject({ cwd: dir })
    for (const w of project.warnings)
      io().stderr.write(`warning: ${formatProblem(w)}
`)
    const n = project.resources.length
    io().stderr.write(`${show(project.configFile)} is read as it is: ${n} resource${n === 1 ? '' : 's'} in ${project.files.length} file${project.files.length === 1 ? '' : 's'} (${summarizeResources(project.resources)}); the lock will be monitoring.lock.json beside it.
`)
    io().stderr.write(nextSteps(dir))
    return 0
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error
    for (const p of error.problems)
      io().stderr.write(`✖ ${formatProblem(p)}
`)
    io().stderr.write(`${error.problems.length} problem${error.problems.length === 1 ? '' : 's'} to fix before the project can be applied: see docs/migrating-from-checkly.md for what maps.
`)
    return 1
  }
}

export const initCommand: Command<InitArgs> = {
  command: 'init [dir]',
  describe: 'Scaffold a config, an example check file, a tsconfig.json and the .gitignore lines',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'Directory of the new project' })
      .option('project-name', { type: 'string', describe: 'Project name (default: the directory name)' })
      .option('env', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Declare this environment in the config (repeatable: --env staging --env production); each gets its own lock file',
      })
      .option('from-checkly', {
        type: 'boolean',
        default: false,
        describe: "A repository with the hosted CLI's checkly.config.ts: write no config, add the .gitignore lines and show what the project holds",
      }),
  handler: (args) => {
    const dir = resolve(args.dir)
    const checkly = CHECKLY_CONFIG_FILE_NAMES.find((name) => existsSync(join(dir, name)))
    if (checkly) return fromCheckly(dir, checkly, args['from-checkly'] === true)
    if (args['from-checkly']) {
      io().stderr.write(`${relative(process.cwd(), dir) || '.'} has no checkly.config.ts: run init without --from-checkly to start a project of monitors' own.
`)
      return 1
    }
    const environments = (args.env ?? []).map(String)
    const result = scaffoldProject(dir, { projectName: args['project-name'], environments })
    const show = (f: string) => relative(process.cwd(), f) || f
    for (const file of result.written) io().stderr.write(`created ${show(file)}\n`)
    for (const file of result.skipped)
      io().stderr.write(
        `skipped ${show(file)} (it exists and is never overwritten; for "tsc --noEmit" it should include monitoring.config.ts and the check files)\n`,
      )
    const gitignore = show(resolve(dir, '.gitignore'))
    if (result.gitignore !== 'unchanged')
      io().stderr.write(`${result.gitignore === 'created' ? 'created' : 'updated'} ${gitignore} (${result.gitignoreLines.join(', ')})\n`)
    else io().stderr.write(`skipped ${gitignore} (it already ignores node_modules/ and .monitors/)\n`)
    io().stderr.write(nextSteps(dir, environments))
    return 0
  },
}
