import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { consoleOptions, limitOf, listOptions, moreNote, parseWhen, runConsole, when, type ConsoleArgs, type ListArgs } from '../console.js'
import { note, stateColor, table, type Column } from '../view.js'
import { checkCandidates } from './checks.js'
import { DELIVERY_STATES, getCheck, listDeliveries, type Delivery, type DeliveryState } from '../../api/account.js'
import { NotFoundError } from '../../api/errors.js'
import type { ApiClient } from '../../api/client.js'
import { UserError } from '../../errors.js'

interface AlertsArgs extends ConsoleArgs, ListArgs {
  action: 'log'
  channel?: string
  status?: DeliveryState
  from?: string
  to?: string
  check?: string
}

/** The names of the checks the deliveries are of (one GET each, four at a time); a deleted check by its id. */
async function checkNames(client: ApiClient, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  let next = 0
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++]
      try {
        names.set(id, String((await getCheck(client, id)).name))
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error
        names.set(id, `${id} (deleted)`)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(4, ids.length) }, worker))
  return names
}

/**
 * `monitors alerts log`: the deliveries of the alert notifications, newest first (GET
 * /v1/alert-notifications with the reference's from, to, alertChannelId and hasFailures), one line
 * each: when, the check, the channel, its outcome and why.
 */
export const alertsCommand: Command<AlertsArgs> = {
  command: 'alerts <action>',
  describe: 'Show the alert deliveries, newest first: which check alerted which channel, and whether it was delivered (--channel, --status, --from, --to)',
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'alert notifications')
      .positional('action', { choices: ['log'] as const, describe: 'log: the deliveries' })
      .option('channel', {
        type: 'string',
        requiresArg: true,
        describe: 'An alert channel of the account by its id (12), or a channel type (webhook, email, slack, …)',
      })
      .option('status', { choices: DELIVERY_STATES, describe: 'Deliveries delivered, failed, pending (an attempt to come) or not-delivered (never attempted)' })
      .option('from', { type: 'string', requiresArg: true, describe: 'Notifications from this time: ISO date-time, UNIX seconds, or a time ago (6h, 2d)' })
      .option('to', { type: 'string', requiresArg: true, describe: 'Notifications before this time (as --from)' })
      .option('check', { type: 'string', requiresArg: true, describe: "Only this check's: its logical id, its id or the start of its id" })
      .example('$0 alerts log --status failed --from 1d', "yesterday's deliveries that failed, and why")
      .example('$0 alerts log --channel 12 --format json', 'what the account channel 12 was sent') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      const now = Date.now()
      const from = args.from !== undefined ? parseWhen('--from', args.from, now) : undefined
      const to = args.to !== undefined ? parseWhen('--to', args.to, now) : undefined
      if (from !== undefined && to !== undefined && !(from < to)) throw new UserError(`--from must be before --to (got ${args.from} and ${args.to}).`)
      const channelId = args.channel !== undefined && /^\d+$/.test(args.channel) ? Number(args.channel) : undefined
      const channelType = args.channel !== undefined && channelId === undefined ? args.channel.toUpperCase() : undefined
      const checkId = args.check !== undefined ? await c.checkId(args.check, checkCandidates(c.client)) : undefined
      // the reference's filters, sent; and applied here, with --check and a channel type, which it has not
      const keep = (d: Delivery) => {
        const time = Date.parse(d.at ?? '')
        return (
          (args.status === undefined || d.state === args.status) &&
          (channelId === undefined || d.alertChannelId === channelId) &&
          (channelType === undefined || d.channelType === channelType) &&
          (checkId === undefined || d.checkId === checkId) &&
          (from === undefined || !(time < from)) &&
          (to === undefined || time < to)
        )
      }
      const seconds = (t: number | undefined) => (t === undefined ? undefined : Math.floor(t / 1000))
      const hasFailures = args.status === 'failed' ? true : args.status === 'delivered' ? false : undefined
      const slice = await listDeliveries(c.client, { from: seconds(from), to: seconds(to), alertChannelId: channelId, hasFailures }, limitOf(args), keep)
      // the check's name as the notification says it, else as the check does
      const named = new Map(slice.items.filter((d) => d.checkId !== null && d.checkName !== null).map((d) => [d.checkId as string, d.checkName as string]))
      const unnamed = [...new Set(slice.items.map((d) => d.checkId).filter((id): id is string => id !== null && !named.has(id)))]
      const names = new Map([...named, ...(await checkNames(c.client, unnamed))])
      const logical = c.logicalIds()
      const checkOf = (d: Delivery) => (d.checkId === null ? '-' : (names.get(d.checkId) ?? logical.get(d.checkId) ?? d.checkId))
      const columns: Column<Delivery>[] = [
        { head: 'TIME (UTC)', value: (d) => when(d.at) },
        { head: 'CHECK', value: checkOf, shrink: true },
        { head: 'ALERT', value: (d) => d.alertType ?? '-', optional: true },
        { head: 'CHANNEL', value: (d) => `${d.channelType.toLowerCase()}${d.alertChannelId !== null ? ` #${d.alertChannelId}` : ''}` },
        { head: 'STATUS', value: (d) => d.state, paint: (d) => stateColor(d.state) },
        { head: 'TRIES', value: (d) => String(d.attempts), right: true, optional: true },
        { head: 'DETAIL', value: (d) => d.detail ?? d.destination ?? '', shrink: true },
      ]
      const more = moreNote(slice.items.length, 'deliveries', slice)
      c.show({
        blocks: [
          table(columns, slice.items, { empty: 'No alert deliveries match.' }),
          ...(more ? [note(more.replace('deliveries shown', 'deliveries shown (of the newest notifications)'))] : []),
        ],
        json: {
          deliveries: slice.items.map((d) => ({
            ...d,
            checkName: d.checkId ? (names.get(d.checkId) ?? null) : null,
            logicalId: d.checkId ? (logical.get(d.checkId) ?? null) : null,
          })),
          more: slice.more,
        },
      })
    }),
}
