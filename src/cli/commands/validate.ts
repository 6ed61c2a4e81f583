import type { CommandModule } from 'yargs'

// Placeholder until the command is built; it refuses to run rather than pretend.
export const validateCommand: CommandModule = {
  command: 'validate',
  describe: 'validate (not built yet)',
  handler: () => {
    throw Object.assign(new Error('"monitors validate" is not built yet'), { userError: true })
  },
}
