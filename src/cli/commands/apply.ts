import type { CommandModule } from 'yargs'

// Placeholder until the command is built; it refuses to run rather than pretend.
export const applyCommand: CommandModule = {
  command: 'apply',
  describe: 'apply (not built yet)',
  handler: () => {
    throw Object.assign(new Error('"monitors apply" is not built yet'), { userError: true })
  },
}
