import type { CommandModule } from 'yargs'

// Placeholder until the command is built; it refuses to run rather than pretend.
export const planCommand: CommandModule = {
  command: 'plan',
  describe: 'plan (not built yet)',
  handler: () => {
    throw Object.assign(new Error('"monitors plan" is not built yet'), { userError: true })
  },
}
