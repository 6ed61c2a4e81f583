import type { CommandModule } from 'yargs'

// Placeholder until the command is built; it refuses to run rather than pretend.
export const destroyCommand: CommandModule = {
  command: 'destroy',
  describe: 'destroy (not built yet)',
  handler: () => {
    throw Object.assign(new Error('"monitors destroy" is not built yet'), { userError: true })
  },
}
