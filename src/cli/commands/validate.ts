import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import pc from 'picocolors'
import { loadProject, ProjectError, summarizeResources } from '../../project/index.js'

interface ValidateArgs {
  config?: string
}

/**
 * `monitors validate`: loads the config and check files and checks every construct against
 * the API's rules. No network. Problems are reported by the ProjectError the loader throws.
 */
/** main.ts takes a handler's resolved number as the exit code. */
type ExitCodeHandler = (args: ArgumentsCamelCase<ValidateArgs>) => Promise<number>

export const validateCommand = {
  command: 'validate',
  describe: 'Load the project and check every construct against the API rules, without sending anything',
  builder: (yargs: Argv) =>
    yargs.option('config', {
      type: 'string',
      describe: 'Config file (default: monitoring.config.ts in this or a parent directory)',
    }),
  handler: (async (args) => {
    let project
    try {
      project = await loadProject({ config: args.config })
    } catch (error) {
      if (!(error instanceof ProjectError)) throw error
      // every problem on its own line, then the count
      const lines = error.message.split('\n')
      const count = lines.pop()
      process.stderr.write(`${lines.map((l) => `${pc.red('✖')} ${l}`).join('\n')}\n${pc.red(count ?? '')}\n`)
      return 1
    }
    const n = project.resources.length
    const m = project.files.length
    const summary = summarizeResources(project.resources)
    process.stdout.write(
      `${pc.green('Valid:')} ${n} resource${n === 1 ? '' : 's'} in ${m} file${m === 1 ? '' : 's'}${summary ? ` (${summary})` : ''}\n`,
    )
    return 0
  }) satisfies ExitCodeHandler,
} as unknown as CommandModule<object, ValidateArgs>
