import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { consoleOptions, limitOf, listOptions, moreNote, runConsole, when, wholeId, type Console, type ConsoleArgs, type ListArgs } from '../console.js'
import { fields, note, stateColor, table, title, type Column, type View } from '../view.js'
import { incidentStatus, type Incident, type StatusPage } from '../../api/account.js'
import { readSlice } from '../../api/paging.js'
import { UserError } from '../../errors.js'

interface StatusPagesArgs extends ConsoleArgs, ListArgs {
  action: 'list' | 'get'
  id?: string
}

type Card = NonNullable<StatusPage['cards']>[number]

const pages = (c: Console, limit: number) => readSlice<StatusPage>(c.client, '/v1/status-pages', { limit, paging: 'cursor' })

/** Where the page is read: its custom domain, or (on a monitors server) its path on the server. */
async function addressOf(c: Console, page: StatusPage): Promise<string | undefined> {
  if (page.customDomain) return `https://${page.customDomain}`
  if (c.target.embedded) return undefined
  return (await c.me())?.server?.name === 'monitors' ? `${c.client.baseUrl}/status/${encodeURIComponent(page.url)}` : undefined
}

async function getView(c: Console, text: string): Promise<View> {
  // a page by its url too (the subdomain-like name it is read at)
  const all = /^[0-9a-f-]{36}$/i.test(text) ? [] : (await pages(c, Infinity)).items
  const byUrl = all.find((p) => p.url === text)
  const id = byUrl?.id ?? (await wholeId(text, 'status page', async () => all.map((p) => ({ id: p.id, label: p.url }))))
  const page = (await c.client.get<StatusPage>(`/v1/status-pages/${encodeURIComponent(id)}`)).body
  const services = new Set((page.cards ?? []).flatMap((card) => card.services.map((s) => s.id)))
  const incidents =
    services.size === 0
      ? []
      : (await readSlice<Incident>(c.client, '/v1/incidents', { limit: 100 })).items.filter(
          (i) => incidentStatus(i) !== 'RESOLVED' && i.services.some((s) => services.has(s.id)),
        )
  const cardColumns: Column<Card>[] = [
    { head: 'CARD', value: (card) => card.name, shrink: true },
    { head: 'SERVICES', value: (card) => card.services.map((s) => s.name ?? s.id).join(', '), shrink: true },
  ]
  const incidentColumns: Column<Incident>[] = [
    { head: 'STATUS', value: (i) => incidentStatus(i) ?? 'NO UPDATE', paint: (i) => stateColor(incidentStatus(i) ?? '') },
    { head: 'SEVERITY', value: (i) => i.severity },
    { head: 'NAME', value: (i) => i.name, shrink: true },
    { head: 'OPENED (UTC)', value: (i) => when(i.created_at), optional: true },
    { head: 'ID', value: (i) => i.id, id: true },
  ]
  const address = await addressOf(c, page)
  return {
    blocks: [
      title(`Status page ${JSON.stringify(page.name)}`),
      fields([
        ['ID', page.id],
        ['URL', page.url],
        ['Custom domain', page.customDomain ?? undefined],
        ['Address', address],
      ]),
      table(cardColumns, page.cards ?? [], { title: 'Cards', empty: 'No cards.' }),
      table(incidentColumns, incidents, { title: 'Open incidents on its services', empty: 'None.' }),
    ],
    json: { statusPage: page, address: address ?? null, openIncidents: incidents },
  }
}

/**
 * `monitors status-pages list|get`: the account's status pages (GET /v1/status-pages, cursor
 * paging) and one page (GET /v1/status-pages/{id}, by id, the start of it or its url) with its
 * cards and the open incidents on its services.
 */
export const statusPagesCommand: Command<StatusPagesArgs> = {
  command: 'status-pages <action> [id]',
  describe: "List the account's status pages, or show one: its cards, services and open incidents",
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'status pages')
      .positional('action', { choices: ['list', 'get'] as const, describe: 'list the pages, or get one' })
      .positional('id', { type: 'string', describe: "get: the page's id, the start of it, or its url" })
      .example('$0 status-pages list', 'every page: name, url, custom domain')
      .example('$0 status-pages get shop-status', 'a page by its url: cards, services and open incidents') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      if (args.action === 'get') {
        if (!args.id)
          throw new UserError('monitors status-pages get needs a page: its id, the start of it, or its url (monitors status-pages list shows them).')
        c.show(await getView(c, args.id))
        return
      }
      const slice = await pages(c, limitOf(args))
      const columns: Column<StatusPage>[] = [
        { head: 'NAME', value: (p) => p.name, shrink: true },
        { head: 'URL', value: (p) => p.url, shrink: true },
        { head: 'CUSTOM DOMAIN', value: (p) => p.customDomain ?? '-', shrink: true, optional: true },
        { head: 'CARDS', value: (p) => String(p.cards?.length ?? 0), right: true, optional: true },
        { head: 'ID', value: (p) => p.id, id: true },
      ]
      const more = moreNote(slice.items.length, 'status pages', slice)
      c.show({
        blocks: [table(columns, slice.items, { empty: 'No status pages.' }), ...(more ? [note(more)] : [])],
        json: { statusPages: slice.items, more: slice.more },
      })
    }),
}
