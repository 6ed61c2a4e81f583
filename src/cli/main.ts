import yargs, { type Argv, type CommandModule } from 'yargs'
import { reportError } from './output.js'
import { addSecret, redact } from '../api/redact.js'
import { colorFlag, colorWanted, setColor } from './color.js'
import { toolVersion } from './version.js'
import { io, withIo, type CliIo } from './io.js'

/**
 * The commands, each imported only when it runs (or shows its --help): a plan never loads the
 * runner, the agent or the server, and `monitors --help` loads none of them. `command` and
 * `describe` are the module's own (test/cli/lazy-commands.test.ts keeps them equal). Handlers
 * may resolve to an exit code (see ./command.ts) or set nothing (exit 0).
 */
export interface LazyCommand {
  command: string
  describe: string
  // biome-ignore lint/suspicious/noExplicitAny: commands of every argument shape in one table (yargs' types are invariant)
  load: () => Promise<CommandModule<any, any>>
}

const lazy = (command: string, describe: string, load: () => Promise<unknown>): LazyCommand => ({ command, describe, load: load as LazyCommand['load'] })

export const COMMANDS: LazyCommand[] = [
  lazy(
    'init [dir]',
    'Scaffold a config, an example check file, a tsconfig.json and the .gitignore lines',
    async () => (await import('./commands/init.js')).initCommand,
  ),
  lazy(
    'validate',
    'Load the project and check every construct against the API rules, without sending anything',
    async () => (await import('./commands/validate.js')).validateCommand,
  ),
  lazy('plan', 'Show what apply would create, update and delete, without changing anything', async () => (await import('./commands/plan.js')).planCommand),
  lazy(
    'apply [plan]',
    'Plan, confirm, then create, update and delete remote resources to match the code (or run a saved plan)',
    async () => (await import('./commands/apply.js')).applyCommand,
  ),
  lazy('destroy', 'Delete every resource recorded in the lock file', async () => (await import('./commands/destroy.js')).destroyCommand),
  lazy(
    'import [resources..]',
    'List remote resources the lock does not know; write constructs for them (--all, or kind:id...), or adopt them (--adopt)',
    async () => (await import('./commands/import.js')).importCommand,
  ),
  lazy(
    'test',
    'Run every check of the project once from this machine and show the results, without deploying anything',
    async () => (await import('./commands/test.js')).testCommand,
  ),
  lazy(
    'status',
    "Show the target's check statuses for the project's checks, with badge URLs",
    async () => (await import('./commands/status.js')).statusCommand,
  ),
  lazy(
    'trigger [checks..]',
    'Run deployed checks on the target now (by logical id, --group or --tag), wait for their results, exit 1 when one fails',
    async () => (await import('./commands/trigger.js')).triggerCommand,
  ),
  lazy(
    'checks <action> [id]',
    "List the target's checks and their status (--tag, --type, --status, --search), or show one: status, last results, error groups, analytics",
    async () => (await import('./commands/checks.js')).checksCommand,
  ),
  lazy(
    'results <check> [result]',
    "Show a check's results, or one result: its error, details, logs, timings and assets (--download DIR writes them)",
    async () => (await import('./commands/results.js')).resultsCommand,
  ),
  lazy(
    'sessions <action> [id]',
    'Show a check session (as trigger starts them) and its results; --watch waits for it to finish',
    async () => (await import('./commands/sessions.js')).sessionsCommand,
  ),
  lazy(
    'alerts <action>',
    'Show the alert deliveries, newest first: which check alerted which channel, and whether it was delivered (--channel, --status, --from, --to)',
    async () => (await import('./commands/alerts.js')).alertsCommand,
  ),
  lazy(
    'incidents <action> [id]',
    "List the account's incidents, or open, update and resolve one (--notify-subscribers: email the status pages' subscribers)",
    async () => (await import('./commands/incidents.js')).incidentsCommand,
  ),
  lazy(
    'status-pages <action> [id]',
    "List the account's status pages, or show one: its cards, services and open incidents",
    async () => (await import('./commands/status-pages.js')).statusPagesCommand,
  ),
  lazy(
    'env <action> [name]',
    "List or show the account's variables (secret ones as secret, never their values), or pull them into a dotenv file",
    async () => (await import('./commands/env.js')).envCommand,
  ),
  lazy(
    'api <method> <path>',
    "Send one authenticated request to the target's API (as gh api): -F key=value fields, --input FILE, --include",
    async () => (await import('./commands/api.js')).apiCommand,
  ),
  lazy(
    'whoami',
    'Show the target, the account, the API key and its role, and the server version',
    async () => (await import('./commands/whoami.js')).whoamiCommand,
  ),
  lazy(
    'server',
    'Run the local Monitoring API (SQLite, or PostgreSQL for several servers) until Ctrl-C',
    async () => (await import('./commands/server.js')).serverCommand,
  ),
  lazy(
    'keys <action> [id]',
    "Create, list or revoke the API keys of a server's database (roles read, write, agent, admin)",
    async () => (await import('./commands/keys.js')).keysCommand,
  ),
  lazy(
    'runtimes [action] [ids..]',
    'List the script runtimes and whether each is prepared here; prepare one (runtimes prepare [ids..]: its npm packages installed)',
    async () => (await import('./commands/runtimes.js')).runtimesCommand,
  ),
  lazy(
    'agent',
    'Run checks for a Monitoring API server from this machine, for the locations given (a self-hosted agent)',
    async () => (await import('./commands/agent.js')).agentCommand,
  ),
]

export type { CliIo } from './io.js'

/**
 * Runs the CLI with the given arguments and resolves to the process exit code.
 * Commands set `process.exitCode` through their return value; errors a user can cause are
 * printed as one clear line (no stack), see ./output.ts. `given`: streams, environment and
 * working directory other than the process's (see ./io.ts); every output goes there.
 */
export async function main(argv: string[], given: Partial<CliIo> = {}): Promise<number> {
  return withIo(given, () => run(argv))
}

async function run(argv: string[]): Promise<number> {
  const { env, stdout, stderr } = io()
  // masked in every message from the start, even one about the arguments themselves
  addSecret(env.MONITORING_API_KEY)
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
    .demandCommand(
      1,
      'Name a command: init, validate, test, plan, apply, destroy, import, status, trigger, checks, results, sessions, alerts, incidents, status-pages, env, api, whoami, server, keys, runtimes or agent.',
    )
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(toolVersion())
    .option('color', {
      type: 'boolean',
      global: true,
      describe: 'Colour the output (default: only when stdout is a terminal; NO_COLOR or --no-color turns it off, FORCE_COLOR on)',
    })
    .wrap(Math.min(100, stdout.columns || 100))
    .fail((message, error) => {
      // a YError is a usage problem (also one thrown by an option's coerce check)
      if (error && error.name !== 'YError') throw error
      // yargs may report several problems (a suggestion, then the unknown arguments): keep all
      usageProblems.push(message)
    })
  skipHelpRendering(parser)
  for (const command of COMMANDS) {
    parser = parser.command({
      command: command.command,
      describe: command.describe,
      builder: async (inner: Argv) => {
        // the engine (projects, targets, output) comes with the command: --help alone never loads it
        const [{ builder }, engine] = await Promise.all([command.load(), import('./engine.js')])
        // a run starts from the defaults (one process may run the CLI several times)
        engine.setStdoutFormat(undefined)
        engine.rememberArgv(argv)
        const emptyTarget = engine.emptyTargetProblem(argv)
        if (emptyTarget) usageProblems.push(emptyTarget)
        if (typeof builder === 'function') return builder(inner)
        return builder ? inner.options(builder) : inner
      },
      handler: async (args) => {
        // a command with bad arguments must not run
        if (usageProblems.length > 0) return
        const code: unknown = await (await command.load()).handler(args)
        if (typeof code === 'number') exitCode = code
      },
    })
  }
  try {
    // with a callback yargs never exits the process: help and version come back as text
    await parser.parseAsync(argv, {}, (_error: unknown, _parsed: unknown, output: string) => {
      if (output) stdout.write(`${output}\n`)
    })
  } catch (error) {
    // a usage problem found while a command's (asynchronous) builder parsed its options
    if (error instanceof Error && error.name === 'YError') usageProblems.push(error.message)
    else exitCode = reportError(error)
  }
  if (usageProblems.length > 0) {
    stderr.write(redact(`${[...new Set(usageProblems)].map((m) => `monitors: ${m}`).join('\n')}\nRun "monitors --help" for usage.\n`))
    return 1
  }
  return exitCode
}

/**
 * yargs renders a command's whole help text as the command starts, to show it should the command
 * fail later. monitors never shows it then (`.fail` above collects the message alone), and the
 * rendering (cliui, string widths) cost a plan more CPU than comparing 1,000 checks. `--help`
 * still renders it when asked.
 */
function skipHelpRendering(parser: Argv): void {
  const internal = (parser as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }).getInternalMethods?.()
  const usage = internal?.getUsageInstance?.()
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {}
}
