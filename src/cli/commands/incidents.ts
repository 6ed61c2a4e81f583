import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { err } from '../engine.js'
import { consoleOptions, limitOf, listOptions, moreNote, runConsole, when, wholeId, type Console, type ConsoleArgs, type ListArgs } from '../console.js'
import { fields, note, stateColor, table, title, type Column, type View } from '../view.js'
import { getIncident, incidentStatus, type Incident, type IncidentUpdate } from '../../api/account.js'
import { readSlice } from '../../api/paging.js'
import { INCIDENT_UPDATE_STATUSES, SEVERITIES } from '../../schema/enums.js'
import { incidentSchema, incidentUpdateSchema } from '../../schema/incident.js'
import { formatFieldIssue, validate } from '../../schema/issues.js'
import { UserError } from '../../errors.js'

interface IncidentsArgs extends ConsoleArgs, ListArgs {
  action: 'list' | 'create' | 'update' | 'resolve'
  id?: string
  name?: string
  severity?: string
  service?: string[]
  status?: string
  message?: string
  notifySubscribers: boolean
  open?: boolean
}

const servicesText = (i: Incident) => i.services.map((s) => s.name ?? s.id).join(', ')

function incidentView(incident: Incident, heading: string): View {
  const columns: Column<IncidentUpdate>[] = [
    { head: 'TIME (UTC)', value: (u) => when(u.created_at) },
    { head: 'STATUS', value: (u) => u.status, paint: (u) => stateColor(u.status) },
    { head: 'NOTIFIED', value: (u) => (u.notifySubscribers ? 'yes' : 'no'), optional: true },
    { head: 'MESSAGE', value: (u) => u.description ?? '', shrink: true },
  ]
  return {
    blocks: [
      title(heading),
      fields([
        ['ID', incident.id],
        ['Name', incident.name],
        ['Severity', incident.severity],
        ['Status', incidentStatus(incident) ?? 'no update yet'],
        ['Services', servicesText(incident) || undefined],
        ['Opened', `${when(incident.created_at)} UTC`],
      ]),
      table(columns, incident.incidentUpdates ?? [], { title: 'Updates (newest first)', empty: 'No update yet.' }),
    ],
    json: { incident },
  }
}

/** A body checked by the API's own schema before it is sent: a bad one is refused naming the flag. */
function checked<T>(schema: Parameters<typeof validate>[0], body: unknown, flags: Record<string, string>): T {
  const result = validate(schema, body)
  if (result.ok) return result.data as T
  const named = result.issues.map((issue) => formatFieldIssue({ ...issue, path: flags[issue.path.split('.')[0]] ?? issue.path }))
  throw new UserError(`Nothing was sent: ${named.join('; ')}.`)
}

const UPDATE_FLAGS = { status: '--status', description: '--message', notifySubscribers: '--notify-subscribers' }

/** The status-page services `--service` names: an id, or a service's name. */
async function serviceIds(c: Console, given: string[]): Promise<Array<{ id: string }>> {
  if (given.length === 0) return []
  const services = (await readSlice<{ id: string; name: string }>(c.client, '/v1/status-pages/services', { limit: Infinity })).items
  return given.map((text) => {
    const found = services.find((s) => s.id === text) ?? services.filter((s) => s.name === text)[0]
    if (!found)
      throw new UserError(
        `--service ${JSON.stringify(text)} names no status-page service of the account (its services: ${services.map((s) => `${s.name} (${s.id})`).join(', ') || 'none'}).`,
      )
    return { id: found.id }
  })
}

async function incidentId(c: Console, text: string | undefined, action: string): Promise<string> {
  if (!text) throw new UserError(`monitors incidents ${action} needs the incident: its id or the start of it (monitors incidents list shows them).`)
  return wholeId(text, 'incident', async () =>
    (await readSlice<Incident>(c.client, '/v1/incidents', { limit: 500 })).items.map((i) => ({ id: i.id, label: JSON.stringify(i.name) })),
  )
}

async function create(c: Console, args: IncidentsArgs): Promise<View> {
  if (!args.name) throw new UserError('monitors incidents create needs --name (what is wrong, as the status pages show it).')
  const update = checked<{ status: string; description: string; notifySubscribers: boolean }>(
    incidentUpdateSchema,
    { status: args.status ?? 'INVESTIGATING', description: args.message, notifySubscribers: args.notifySubscribers },
    UPDATE_FLAGS,
  )
  checked(incidentSchema, { name: args.name, severity: args.severity ?? 'MINOR' }, { name: '--name', severity: '--severity' })
  await c.requireWrite('incidents create')
  const body = { name: args.name, severity: args.severity ?? 'MINOR', services: await serviceIds(c, args.service ?? []) }
  const incident = (await c.client.post<Incident>('/v1/incidents', body)).body
  try {
    await c.client.post(`/v1/incidents/${encodeURIComponent(incident.id)}/updates`, update)
  } catch (error) {
    // an incident without its first update is not what was asked: taken back
    await c.client.delete(`/v1/incidents/${encodeURIComponent(incident.id)}`).catch(() => undefined)
    throw error
  }
  return incidentView(await getIncident(c.client, incident.id), `Incident ${JSON.stringify(incident.name)} opened`)
}

async function post(c: Console, args: IncidentsArgs, resolve: boolean): Promise<View> {
  const action = resolve ? 'resolve' : 'update'
  if (!resolve && !args.message) throw new UserError('monitors incidents update needs --message: what is known now, as the status pages show it.')
  await c.requireWrite(`incidents ${action}`)
  const id = await incidentId(c, args.id, action)
  const incident = await getIncident(c.client, id)
  const current = incidentStatus(incident)
  if (resolve && current === 'RESOLVED') {
    err(`Incident ${id} is resolved already: nothing was sent.\n`)
    return incidentView(incident, `Incident ${JSON.stringify(incident.name)}`)
  }
  const update = checked<object>(
    incidentUpdateSchema,
    {
      status: resolve ? 'RESOLVED' : (args.status ?? current ?? 'INVESTIGATING'),
      description: args.message ?? 'Resolved.',
      notifySubscribers: args.notifySubscribers,
    },
    UPDATE_FLAGS,
  )
  if (args.severity !== undefined && args.severity !== incident.severity) {
    const body = checked<object>(
      incidentSchema,
      { name: incident.name, severity: args.severity, services: incident.services.map((s) => ({ id: s.id })) },
      { severity: '--severity' },
    )
    await c.client.put(`/v1/incidents/${encodeURIComponent(id)}`, body)
  }
  await c.client.post(`/v1/incidents/${encodeURIComponent(id)}/updates`, update)
  return incidentView(await getIncident(c.client, id), `Incident ${JSON.stringify(incident.name)} ${resolve ? 'resolved' : 'updated'}`)
}

async function list(c: Console, args: IncidentsArgs): Promise<View> {
  const keep = args.open ? (i: Incident) => incidentStatus(i) !== 'RESOLVED' : undefined
  const slice = await readSlice<Incident>(c.client, '/v1/incidents', { limit: limitOf(args), keep })
  const state = (i: Incident) => incidentStatus(i) ?? 'NO UPDATE'
  const columns: Column<Incident>[] = [
    { head: 'STATUS', value: state, paint: (i) => stateColor(state(i)) },
    { head: 'SEVERITY', value: (i) => i.severity, paint: (i) => stateColor(i.severity) },
    { head: 'NAME', value: (i) => i.name, shrink: true },
    { head: 'SERVICES', value: servicesText, shrink: true, optional: true },
    { head: 'OPENED (UTC)', value: (i) => when(i.created_at), optional: true },
    { head: 'ID', value: (i) => i.id, id: true },
  ]
  const more = moreNote(slice.items.length, 'incidents', slice)
  return {
    blocks: [table(columns, slice.items, { empty: args.open ? 'No open incident.' : 'No incidents.' }), ...(more ? [note(more)] : [])],
    json: { incidents: slice.items.map((i) => ({ ...i, status: incidentStatus(i) ?? null })), total: slice.total ?? null, more: slice.more },
  }
}

/**
 * `monitors incidents list|create|update|resolve`: the account's incidents (GET /v1/incidents),
 * one opened with its first update (POST /v1/incidents, then …/updates), an update posted
 * (--status, --message, --severity), or resolved (a RESOLVED update); --notify-subscribers emails
 * the subscribers of the pages showing its services. A write with a read key is refused before
 * anything is sent.
 */
export const incidentsCommand: Command<IncidentsArgs> = {
  command: 'incidents <action> [id]',
  describe: "List the account's incidents, or open, update and resolve one (--notify-subscribers: email the status pages' subscribers)",
  builder: (yargs: Argv) =>
    listOptions(consoleOptions(yargs), 'incidents')
      .positional('action', { choices: ['list', 'create', 'update', 'resolve'] as const, describe: 'list, create (open) one, update one, or resolve one' })
      .positional('id', { type: 'string', describe: 'update, resolve: the incident id, or the start of it' })
      .option('name', { type: 'string', requiresArg: true, describe: 'create: what is wrong, as the status pages show it' })
      .option('severity', { choices: SEVERITIES, describe: 'create (default MINOR), update: how bad it is' })
      .option('service', { type: 'string', array: true, requiresArg: true, describe: 'create: a status-page service it concerns (id or name); repeatable' })
      .option('status', {
        choices: INCIDENT_UPDATE_STATUSES.filter((s) => s !== 'RESOLVED'),
        describe: 'create (default INVESTIGATING), update (default: as it is): where the work is',
      })
      .option('message', { type: 'string', requiresArg: true, describe: 'create, update (required), resolve (default "Resolved."): the text of the update' })
      .option('notify-subscribers', {
        type: 'boolean',
        default: false,
        describe: "Email the update to the subscribers of the status pages that show the incident's services",
      })
      .option('open', { type: 'boolean', default: false, describe: 'list: only incidents not resolved' })
      .example(
        '$0 incidents create --name "Checkout is failing" --severity MAJOR --service Checkout --message "Looking into it" --notify-subscribers',
        'open an incident on a status page',
      )
      .example('$0 incidents update 1b2c3d4e --status IDENTIFIED --message "A bad deploy; rolling back"', 'post what is known')
      .example('$0 incidents resolve 1b2c3d4e --message "Rolled back; checkout works again" --notify-subscribers', 'close it') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      if ((args.action === 'list' || args.action === 'create') && args.id !== undefined)
        throw new UserError(`monitors incidents ${args.action} takes no id (got ${JSON.stringify(args.id)}).`)
      const view =
        args.action === 'list' ? await list(c, args) : args.action === 'create' ? await create(c, args) : await post(c, args, args.action === 'resolve')
      c.show(view)
    }),
}
