import type { ArgumentsCamelCase, CommandModule } from 'yargs'

/** A yargs command whose handler may resolve to the process exit code. */
export type Command<A = object> = Omit<CommandModule<object, A>, 'handler'> & {
  handler: (args: ArgumentsCamelCase<A>) => number | void | Promise<number | void>
}
