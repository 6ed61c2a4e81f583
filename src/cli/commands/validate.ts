import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { io } from '../io.js'
import { paint } from '../color.js'
import {
  formatProblem,
  loadProject,
  NoEnvironmentError,
  ProjectError,
  summarizeResources,
  type EnvironmentRequest,
  type LoadedProject,
  type Problem,
} from '../../project/index.js'
import { envOption, environmentRequest, warnEmptySecrets } from '../engine.js'
import { printWarnings } from './plan.js'

interface ValidateArgs {
  config?: string
  /** false: `--no-cache` */
  cache?: boolean
  env?: string
  format?: 'text' | 'markdown' | 'json'
}

/** main.ts takes a handler's resolved number as the exit code. */
type ExitCodeHandler = (args: ArgumentsCamelCase<ValidateArgs>) => Promise<number>

/** One validation: of the project, or of the project for one environment. */
interface Validation {
  environment?: string
  project?: LoadedProject
  problems: Problem[]
}

/** Loads and validates the project for `request`; problems are printed (text) and returned. */
async function validateFor(args: ValidateArgs, request: EnvironmentRequest | undefined, label: string | undefined): Promise<Validation> {
  try {
    const project = await loadProject({ config: args.config, environment: request, cache: args.cache })
    warnEmptySecrets(project.resources)
    printWarnings(project.warnings)
    return { environment: project.config.environment?.name, project, problems: [] }
  } catch (error) {
    if (error instanceof NoEnvironmentError) throw error
    if (!(error instanceof ProjectError)) throw error
    if (args.format === 'text') {
      const pc = paint()
      // every problem on its own line, then the count
      const lines = error.message.split('\n')
      const count = lines.pop()
      io().stderr.write(
        `${label ? `${pc.bold(`Environment ${label}:`)}\n` : ''}${lines.map((l) => `${pc.red('✖')} ${l}`).join('\n')}\n${pc.red(count ?? '')}\n`,
      )
    }
    return { environment: label ?? request?.name, problems: error.problems }
  }
}

/**
 * The project as the command validates it: for the environment chosen (`--env`, MONITORS_ENV,
 * `defaultEnvironment`), or without one; when the config declares environments and none is
 * chosen, for each of them in turn (nothing is sent, so each can be checked).
 */
async function validations(args: ValidateArgs): Promise<{ runs: Validation[]; each: boolean }> {
  const request = environmentRequest(args)
  try {
    return { runs: [await validateFor(args, request, undefined)], each: false }
  } catch (error) {
    if (!(error instanceof NoEnvironmentError)) throw error
    const runs: Validation[] = []
    for (const name of error.environments) runs.push(await validateFor(args, { name, from: '--env' }, name))
    return { runs, each: true }
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** `3 resources in 1 file (2 DnsCheck, 1 IcmpCheck)`. */
function validSummary(project: LoadedProject): string {
  const summary = summarizeResources(project.resources)
  return `${plural(project.resources.length, 'resource')} in ${plural(project.files.length, 'file')}${summary ? ` (${summary})` : ''}`
}

function jsonOf(v: Validation) {
  const { project, problems } = v
  return {
    ...(v.environment !== undefined ? { environment: v.environment } : {}),
    valid: problems.length === 0,
    resources: project ? project.resources.map((r) => ({ kind: r.kind, logicalId: r.logicalId, construct: r.construct, file: r.file })) : [],
    files: project?.files ?? [],
    problems,
    warnings: project?.warnings ?? [],
  }
}

function markdownOf(v: Validation): string {
  const escape = (t: string) => t.replace(/[|`<>]/g, (c) => `&#${c.charCodeAt(0)};`)
  const { project, problems } = v
  const title = `### monitors validate${v.environment !== undefined ? `: ${escape(v.environment)}` : ''}`
  return problems.length === 0
    ? `${title}\n\n**Valid:** ${project ? validSummary(project) : ''}\n${
        project?.warnings.length ? `\n**Warnings:**\n\n${project.warnings.map((w) => `- ${escape(formatProblem(w))}`).join('\n')}\n` : ''
      }`
    : `${title}\n\n**${plural(problems.length, 'problem')}** found; nothing was sent.\n\n| File | Construct | Field | Problem |\n|---|---|---|---|\n${problems
        .map(
          (p) =>
            `| ${escape(p.file + (p.line ? `:${p.line}` : ''))} | ${escape(p.construct ? `${p.construct}${p.logicalId !== undefined ? ` ${p.logicalId}` : ''}` : '')} | ${escape(p.field ?? '')} | ${escape(p.message)} |`,
        )
        .join('\n')}\n`
}

/**
 * `monitors validate`: loads the config and check files and checks every construct against
 * the API's rules. No network. Problems are reported by the ProjectError the loader throws.
 */
export const validateCommand = {
  command: 'validate',
  describe: 'Load the project and check every construct against the API rules, without sending anything',
  builder: (yargs: Argv) =>
    envOption(yargs)
      .option('cache', {
        type: 'boolean',
        default: true,
        describe: 'Keep validated constructs between commands (--no-cache: neither read nor write them; env MONITORS_CACHE=0)',
      })
      .option('config', {
        alias: 'c',
        type: 'string',
        describe: 'Config file (default: monitoring.config.ts in this or a parent directory)',
      })
      .option('format', {
        choices: ['text', 'markdown', 'json'] as const,
        default: 'text' as const,
        describe: 'Output: text, markdown (a pull-request comment) or json (problems as data, docs/plan-json.md)',
      }),
  handler: (async (args) => {
    // each: the config declares environments and none was chosen, so every one was validated
    const { runs, each } = await validations(args)
    const valid = runs.every((v) => v.problems.length === 0)
    if (args.format === 'json') {
      if (!each) {
        io().stdout.write(`${JSON.stringify({ formatVersion: 1, ...jsonOf(runs[0]) }, null, 2)}\n`)
      } else {
        // the whole project: every environment's problems and warnings, each naming its environment
        const docs = runs.map(jsonOf)
        const seen = new Set<string>()
        const resources = docs.flatMap((d) => d.resources).filter((r) => !seen.has(`${r.kind}:${r.logicalId}`) && seen.add(`${r.kind}:${r.logicalId}`))
        io().stdout.write(
          `${JSON.stringify(
            {
              formatVersion: 1,
              valid,
              environments: docs,
              resources,
              files: [...new Set(docs.flatMap((d) => d.files))].sort(),
              problems: docs.flatMap((d) => d.problems.map((p) => ({ ...p, environment: d.environment }))),
              warnings: docs.flatMap((d) => d.warnings.map((w) => ({ ...w, environment: d.environment }))),
            },
            null,
            2,
          )}\n`,
        )
      }
    } else if (args.format === 'markdown') {
      io().stdout.write(runs.map(markdownOf).join('\n'))
    } else {
      for (const v of runs) {
        if (v.problems.length > 0 || !v.project) continue
        const where = v.environment !== undefined ? ` for ${v.environment}` : ''
        io().stdout.write(`${paint().green(`Valid${where}:`)} ${validSummary(v.project)}\n`)
      }
    }
    return valid ? 0 : 1
  }) satisfies ExitCodeHandler,
} as unknown as CommandModule<object, ValidateArgs>
