import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { paint } from '../color.js'
import { formatProblem, loadProject, ProjectError, summarizeResources, type Problem } from '../../project/index.js'
import { warnEmptySecrets } from '../engine.js'
import { printWarnings } from './plan.js'

interface ValidateArgs {
  config?: string
  format?: 'text' | 'markdown' | 'json'
}

/** main.ts takes a handler's resolved number as the exit code. */
type ExitCodeHandler = (args: ArgumentsCamelCase<ValidateArgs>) => Promise<number>

/**
 * `monitors validate`: loads the config and check files and checks every construct against
 * the API's rules. No network. Problems are reported by the ProjectError the loader throws.
 */
export const validateCommand = {
  command: 'validate',
  describe: 'Load the project and check every construct against the API rules, without sending anything',
  builder: (yargs: Argv) =>
    yargs
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
    let project
    let problems: Problem[] = []
    try {
      project = await loadProject({ config: args.config })
      warnEmptySecrets(project.resources)
      printWarnings(project.warnings)
    } catch (error) {
      if (!(error instanceof ProjectError)) throw error
      problems = error.problems
      if (args.format === 'text') {
        const pc = paint()
        // every problem on its own line, then the count
        const lines = error.message.split('\n')
        const count = lines.pop()
        process.stderr.write(`${lines.map((l) => `${pc.red('✖')} ${l}`).join('\n')}\n${pc.red(count ?? '')}\n`)
      }
    }
    const n = project?.resources.length ?? 0
    const m = project?.files.length ?? 0
    const summary = project ? summarizeResources(project.resources) : ''
    if (args.format === 'json') {
      process.stdout.write(`${JSON.stringify({
        formatVersion: 1,
        valid: problems.length === 0,
        resources: project ? project.resources.map((r) => ({ kind: r.kind, logicalId: r.logicalId, construct: r.construct, file: r.file })) : [],
        files: project?.files ?? [],
        problems,
        warnings: project?.warnings ?? [],
      }, null, 2)}\n`)
    } else if (args.format === 'markdown') {
      const escape = (t: string) => t.replace(/[|`<>]/g, (c) => `&#${c.charCodeAt(0)};`)
      process.stdout.write(problems.length === 0
        ? `### monitors validate\n\n**Valid:** ${n} resource${n === 1 ? '' : 's'} in ${m} file${m === 1 ? '' : 's'}${summary ? ` (${summary})` : ''}\n${
          project?.warnings.length ? `\n**Warnings:**\n\n${project.warnings.map((w) => `- ${escape(formatProblem(w))}`).join('\n')}\n` : ''}`
        : `### monitors validate\n\n**${problems.length} problem${problems.length === 1 ? '' : 's'}** found; nothing was sent.\n\n| File | Construct | Field | Problem |\n|---|---|---|---|\n${problems
          .map((p) => `| ${escape(p.file + (p.line ? `:${p.line}` : ''))} | ${escape(p.construct ? `${p.construct}${p.logicalId !== undefined ? ` ${p.logicalId}` : ''}` : '')} | ${escape(p.field ?? '')} | ${escape(p.message)} |`)
          .join('\n')}\n`)
    } else if (problems.length === 0) {
      process.stdout.write(
        `${paint().green('Valid:')} ${n} resource${n === 1 ? '' : 's'} in ${m} file${m === 1 ? '' : 's'}${summary ? ` (${summary})` : ''}\n`,
      )
    }
    return problems.length === 0 ? 0 : 1
  }) satisfies ExitCodeHandler,
} as unknown as CommandModule<object, ValidateArgs>
