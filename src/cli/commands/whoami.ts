import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { consoleOptions, runConsole, type ConsoleArgs } from '../console.js'
import { fields, note } from '../view.js'
import { toolVersion } from '../version.js'

/**
 * `monitors whoami`: the target (its identity, URL, environment), the account and the key's
 * role, and the server's version, from GET /v1/accounts/me. A target that does not say the role
 * (the hosted service answers the account alone) shows it as unknown: its 403 then speaks for it.
 */
export const whoamiCommand: Command<ConsoleArgs> = {
  command: 'whoami',
  describe: 'Show the target, the account, the API key and its role, and the server version',
  builder: (yargs: Argv) =>
    consoleOptions(yargs)
      .example('$0 whoami', 'which target and account a pipeline step would act on, and whether its key may write')
      .example('$0 whoami --env staging --format json', "an environment's target, for a program") as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      const me = await c.me()
      const key = me?.key
      const role = key?.role ?? null
      const writes = role === null ? undefined : role === 'write' || role === 'admin'
      c.show({
        blocks: [
          fields([
            // a target is named by its URL unless a target id is set: the URL alone then
            ['Target', c.target.id === c.target.baseUrl ? undefined : c.target.id],
            ['URL', c.target.embedded ? `${c.target.baseUrl} (the embedded local server)` : c.target.baseUrl],
            ['Environment', c.environment],
            [
              'Account',
              me ? `${me.id}${me.name && me.name !== me.id ? ` (${me.name})` : ''}` : (c.target.accountId ?? 'unknown (the target has no GET /v1/accounts/me)'),
            ],
            ['Key', key ? `${key.id}${key.name ? ` "${key.name}"` : ''} (${key.prefix}…)` : undefined],
            [
              'Role',
              role
                ? `${role}${writes ? ' (may read and write)' : role === 'read' ? ' (may only read: write commands are refused)' : ''}`
                : 'unknown (the target does not say: a refused write answers 403)',
            ],
            ['Server', me?.server ? `${me.server.name} ${me.server.version}` : 'unknown'],
            ['CLI', `monitors ${toolVersion()}`],
          ]),
          ...(role === null ? [note('Without a role from the target, write commands are sent and the target refuses what the key may not do.')] : []),
        ],
        json: {
          target: { id: c.target.id, baseUrl: c.target.baseUrl, embedded: c.target.embedded, accountId: c.target.accountId ?? null },
          account: me ? { id: me.id, name: me.name ?? null, runtimeId: me.runtimeId ?? null } : null,
          key: key ? { id: key.id, name: key.name, prefix: key.prefix } : null,
          role,
          server: me?.server ?? null,
          cli: { version: toolVersion() },
        },
      })
    }),
}
