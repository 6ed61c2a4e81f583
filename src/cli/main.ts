import yargs, { type Argv, type CommandModule } from 'yargs'
import { serverCommand } from './commands/server.js'
import { validateCommand } from './commands/validate.js'
import { planCommand } from './commands/plan.js'
import { applyCommand } from './commands/apply.js'
import { destroyCommand } from './commands/destroy.js'
import { initCommand } from './commands/init.js'
import { importCommand } from './commands/import.js'
import { testCommand } from './commands/test.js'
import { reportError } from './output.js'
import { emptyTargetProblem } from './engine.js'
import { addSecret, redact } from '../api/redact.js'
import { colorFlag, colorWanted, setColor } from './color.js'
import { toolVersion } from './version.js'

// Handlers may resolve to an exit code (see ./command.ts) or set nothing (exit 0).
const COMMANDS = [initCommand, validateCommand, planCommand, applyCommand, destroyCommand, importCommand, testCommand, serverCommand] as unknown as Array<CommandModule<any, any>>

/**
 * Runs the CLI with the given arguments and resolves to the process exit code.
 * Commands set `process.exitCode` through their return value; errors a user can cause are
 * printed as one clear line (no stack), see ./output.ts.
 */
export async function main(argv: string[]): Promise<number> {
  // masked in every message from the start, even one about the arguments themselves
  addSecret(process.env.MONITORING_API_KEY)
  argv.forEach((arg, i) => {
    if (arg === '--api-key' || arg === '--apiKey') addSecret(argv[i + 1])
    else if (arg.startsWith('--api-key=') || arg.startsWith('--apiKey=')) addSecret(arg.slice(arg.indexOf('=') + 1))
  })
  setColor(colorWanted({ flag: colorFlag(argv) }))
  let exitCode = 0
  const usageProblems: string[] = []
  let parser: Argv = yargs(argv)
    .scriptName('monitors')
    .usage('$0 <command> [options]\n\nMonitoring as code: validate, plan and apply monitors written in TypeScript.')
    .strict()
    .demandCommand(1, 'Name a command: init, validate, test, plan, apply, destroy, import or server.')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(toolVersion())
    .option('color', { type: 'boolean', global: true, describe: 'Colour the output (default: only when stdout is a terminal; NO_COLOR or --no-color turns it off, FORCE_COLOR on)' })
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      // a YError is a usage problem (also one thrown by an option's coerce check)
      if (error && error.name !== 'YError') throw error
      // yargs may report several problems (a suggestion, then the unknown arguments): keep all
      usageProblems.push(message)
    })
  const emptyTarget = emptyTargetProblem(argv)
  if (emptyTarget) usageProblems.push(emptyTarget)
  for (const command of COMMANDS) {
    const handler = command.handler
    parser = parser.command({
      ...command,
      handler: async (args) => {
        // a command with bad arguments must not run
        if (usageProblems.length > 0) return
        const code: unknown = await handler(args)
        if (typeof code === 'number') exitCode = code
      },
    })
  }
  try {
    await parser.parseAsync()
  } catch (error) {
    exitCode = reportError(error)
  }
  if (usageProblems.length > 0) {
    process.stderr.write(redact(`${[...new Set(usageProblems)].map((m) => `monitors: ${m}`).join('\n')}\nRun "monitors --help" for usage.\n`))
    return 1
  }
  return exitCode
}
