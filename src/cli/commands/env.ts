import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { err, givenArgument } from '../engine.js'
import { consoleOptions, limitOf, listOptions, moreNote, runConsole, type ConsoleArgs, type ListArgs } from '../console.js'
import { fields, note, table, title, type Column } from '../view.js'
import { io } from '../io.js'
import type { Variable } from '../../api/account.js'
import { readSlice } from '../../api/paging.js'
import { UserError } from '../../errors.js'

interface EnvArgs extends ConsoleArgs, ListArgs {
  action: 'list' | 'get' | 'pull'
  name?: string
  force?: boolean
}

/** What a variable shows: its value, or that it is secret (the API never answers a secret's value). */
const shownValue = (v: Variable) => (v.secret ? '(secret)' : v.value)
/** A variable in JSON: a secret one without a value. */
const asJson = (v: Variable) => ({ key: v.key, secret: v.secret === true, locked: v.locked === true, value: v.secret ? null : v.value })

/** KEY=value as dotenv reads it: quoted (with \n, \" and \\) when the value holds anything but plain characters. */
export function dotenvLine(key: string, value: string): string {
  if (/^[A-Za-z0-9_./:@,+-]*$/.test(value)) return `${key}=${value}`
  return `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`
}

function dotenv(variables: Variable[], target: string): string {
  const lines = [`# The account variables of ${target} (monitors env pull, ${new Date().toISOString()})`]
  for (const v of variables) lines.push(v.secret ? `# ${v.key}: secret, its value is never readable through the API` : dotenvLine(v.key, v.value))
  return `${lines.join('\n')}\n`
}

/**
 * `monitors env list|get|pull [FILE]`: the account's variables (GET /v1/variables,
 * /v1/variables/{key}); a secret one is shown as secret, never its value (the API answers none).
 * `pull` writes them as a dotenv file (default .env; `-`: stdout), a secret one as a comment.
 */
export const envCommand: Command<EnvArgs> = {
  command: 'env <action> [name]',
  describe: "List or show the account's variables (secret ones as secret, never their values), or pull them into a dotenv file",
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'variables', 100)
      .positional('action', { choices: ['list', 'get', 'pull'] as const, describe: 'list the variables, get one, or pull them into a file' })
      .positional('name', { type: 'string', describe: 'get: the key; pull: the file (default .env; - for stdout)' })
      .option('force', { type: 'boolean', default: false, describe: 'pull: replace the file when it exists' })
      .example('$0 env list', 'every variable; secret ones as (secret)')
      .example('$0 env pull .env.monitoring', 'a dotenv file of the non-secret values (mode 600)') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      if (args.action === 'list' && args.name !== undefined)
        throw new UserError(`monitors env list takes no name (got ${JSON.stringify(args.name)}): to show one variable, monitors env get ${args.name}.`)
      if (args.action === 'get') {
        if (!args.name) throw new UserError('monitors env get needs the key of a variable (monitors env list shows them).')
        const v = (await c.client.get<Variable>(`/v1/variables/${encodeURIComponent(args.name)}`)).body
        c.show({
          blocks: [
            title(`Variable ${v.key}`),
            fields([
              ['Value', v.secret ? '(secret: its value is never readable through the API)' : v.value],
              ['Secret', v.secret ? 'yes' : 'no'],
              ['Locked', v.locked ? 'yes' : 'no'],
            ]),
          ],
          json: { variable: asJson(v) },
        })
        return
      }
      const slice = await readSlice<Variable>(c.client, '/v1/variables', { limit: args.action === 'pull' ? Infinity : limitOf(args) })
      if (args.action === 'pull') {
        const text = dotenv(slice.items, c.target.embedded ? 'the embedded local server' : c.client.baseUrl)
        const secrets = slice.items.filter((v) => v.secret).length
        const said = `${slice.items.length - secrets} variable${slice.items.length - secrets === 1 ? '' : 's'}${secrets > 0 ? ` (${secrets} secret left out: their values are never readable)` : ''}`
        if (args.name === '' && !givenArgument('-'))
          throw new UserError('monitors env pull: the file name is empty (an unset variable?): name a file, or - for stdout.')
        if (args.name === '-' || args.name === '') {
          io().stdout.write(text)
          err(`Wrote ${said} to stdout.\n`)
          return
        }
        const file = resolve(io().cwd, args.name ?? '.env')
        const shown = relative(io().cwd, file) || file
        if (existsSync(file) && !args.force) throw new UserError(`${shown} exists: pass --force to replace it, or name another file.`)
        writeFileSync(file, text, { mode: 0o600 })
        chmodSync(file, 0o600)
        c.show({ blocks: [note(`Wrote ${said} to ${shown}.`)], json: { file: shown, variables: slice.items.map(asJson) } })
        return
      }
      const columns: Column<Variable>[] = [
        { head: 'KEY', value: (v) => v.key },
        { head: 'VALUE', value: shownValue, shrink: true },
        { head: 'LOCKED', value: (v) => (v.locked ? 'yes' : 'no'), optional: true },
      ]
      const more = moreNote(slice.items.length, 'variables', slice)
      c.show({
        blocks: [table(columns, slice.items, { empty: 'No variables.' }), ...(more ? [note(more)] : [])],
        json: { variables: slice.items.map(asJson), total: slice.total ?? null, more: slice.more },
      })
    }),
}
