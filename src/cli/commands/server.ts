import type { CommandModule } from 'yargs'

// Placeholder until the command is built; it refuses to run rather than pretend.
export const serverCommand: CommandModule = {
  command: 'server',
  describe: 'server (not built yet)',
  handler: () => {
    throw Object.assign(new Error('"monitors server" is not built yet'), { userError: true })
  },
}
