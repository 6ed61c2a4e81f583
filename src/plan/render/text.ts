import pc from 'picocolors'
import type { Plan, PlanChange } from '../types.js'
import { describeTarget } from '../../state/lock.js'
import { changeBody, driftNote, partialNote, renameHintText, type Line, type ViewOptions } from './view.js'

export interface TextRenderOptions {
  color?: boolean
  /** What follows `No changes.` when there is nothing to do. */
  noChanges?: string
  /** Every field of a create, defaults too (`plan --verbose`). */
  verbose?: boolean
}

type Colors = ReturnType<typeof pc.createColors>

/**
 * The plan as text for a terminal or a CI log, in Terraform's manner: `+` create, `~` update
 * (old → new per field), `-/+` replace, `-` delete, then the summary line. Nested fields are
 * blocks, one field a line; references name their construct; locked and secret values are masked.
 */
export function renderPlanText(plan: Plan, options: TextRenderOptions = {}): string {
  const c = pc.createColors(options.color ?? false)
  const lines: string[] = []
  const changes = plan.changes.filter((change) => change.action !== 'noop')
  const partial = partialNote(plan)
  const view: ViewOptions = { verbose: options.verbose, references: plan.references, refreshOnly: plan.refreshOnly }
  // the environment heads every plan, with or without changes: a reader never guesses which one
  if (plan.environment !== undefined) lines.push(`Environment: ${c.bold(plan.environment)}`)
  if (changes.length === 0) {
    lines.push(`${c.green('No changes.')} ${options.noChanges ?? `The remote state matches the code (${plural(plan.summary.noop, 'resource')} up to date).`}`)
    if (partial) lines.push(c.yellow(partial))
  } else {
    lines.push(`Target: ${describeTarget(plan.target)}`)
    if (partial) lines.push(c.yellow(partial))
    if (plan.refreshOnly) lines.push(c.yellow('Only what was changed outside monitors since the last apply (--refresh-only).'))
    lines.push('')
    for (const change of changes) {
      const out = renderChange(change, c, view)
      const address = statusPageAddress(plan, change)
      if (address) out.splice(1, 0, `    ${c.cyan(`# seen at ${address}`)}`)
      lines.push(...out, '')
    }
    for (const hint of plan.renames ?? []) lines.push(c.yellow(`Hint: ${renameHintText(hint)}.`), '')
    lines.push(summaryLine(plan, c))
  }
  const unmanaged = Object.entries(plan.unmanaged)
  if (unmanaged.length > 0) {
    const total = unmanaged.reduce((n, [, count]) => n + count, 0)
    const detail = unmanaged.map(([kind, count]) => `${count} ${kind}`).join(', ')
    lines.push(c.dim(`${plural(total, 'remote resource')} not in the lock ${total === 1 ? 'was' : 'were'} left alone (${detail}).`))
  }
  return `${lines.join('\n')}\n`
}

export function summaryLine(plan: Plan, c: Colors = pc.createColors(false)): string {
  const s = plan.summary
  const extra = [...(s.move ? [`${s.move} to move`] : []), ...(s.forget ? [`${s.forget} to forget`] : [])]
  const drift = s.drift ? ` ${s.drift} changed outside monitors (drift).` : ''
  // creates apply refuses are no creates: counted apart
  const duplicates = s.duplicate ? ` ${c.red(`${s.duplicate} refused: already ${s.duplicate === 1 ? 'exists' : 'exist'} (duplicate).`)}` : ''
  return `${c.bold('Plan:')} ${s.create} to create, ${s.update} to update, ${s.delete} to delete${extra.length ? `, ${extra.join(', ')}` : ''}.${drift}${duplicates}`
}

function renderChange(change: PlanChange, c: Colors, view: ViewOptions): string[] {
  const title = `${change.kind} ${c.bold(change.logicalId)}`
  const where = change.file ? c.dim(` (${change.construct ? `${change.construct} in ` : ''}${change.file})`) : ''
  const id = change.remoteId ? c.dim(` id ${change.remoteId}`) : ''
  const moved = change.movedFrom ? ` ${c.cyan(`(moved from ${change.movedFrom})`)}` : ''
  const out: string[] = []
  const comment = (text: string) => out.push(`    ${c.yellow(`# ${text}`)}`)
  switch (change.action) {
    case 'create':
      out.push(
        `${c.green('+')} ${title}${moved}${where}${change.drift ? ` ${c.yellow('(drift)')}` : ''}${change.duplicateOf ? ` ${c.red('(duplicate)')}` : ''}`,
      )
      if (change.reason) comment(change.reason)
      break
    case 'update': {
      out.push(`${c.yellow('~')} ${title}${moved}${where}${id}${change.changedOutside ? ` ${c.yellow('(drift)')}` : ''}`)
      const drift = driftNote(change, view)
      if (drift) comment(drift)
      else if (change.reason) comment(change.reason)
      break
    }
    case 'move':
      out.push(`${c.cyan('→')} ${title}${moved}${where}${id}`)
      out.push(`    ${c.dim('# renamed in code (aliases): the lock entry moves; no request is sent')}`)
      break
    case 'forget':
      out.push(`${c.yellow('-')} ${title}${change.name ? ` "${change.name}"` : ''}${id} ${c.yellow('(forget)')}`)
      if (change.reason) comment(change.reason)
      break
    case 'replace':
      out.push(`${c.red('-')}/${c.green('+')} ${title}${where}${id} ${c.red('(replace)')}`)
      if (change.reason) comment(change.reason)
      break
    case 'delete':
      out.push(`${c.red('-')} ${title}${change.name ? ` "${change.name}"` : ''}${id}${change.drift ? ` ${c.yellow('(drift)')}` : ''}`)
      if (change.reason) comment(change.reason)
      break
  }
  for (const line of changeBody(change, view)) out.push(textLine(line, c))
  return out
}

const SIGN_COLOR = { '+': 'green', '-': 'red', '~': 'yellow' } as const

/** `    + request {`: four spaces, the sign, two spaces a level; closing brackets without sign. */
export function textLine(line: Line, c: Colors = pc.createColors(false)): string {
  const indent = '  '.repeat(line.depth)
  if (line.comment) return `    ${indent}${c.dim(line.text)}`
  const sign = line.sign ? c[SIGN_COLOR[line.sign]](line.sign) : ' '
  return `    ${sign} ${indent}${line.text}`
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/**
 * Where the local service shows a status page that is created or changed (its HTML address
 * /status/{url}); on the embedded server, once `monitors server` serves its database.
 */
export function statusPageAddress(plan: Plan, change: PlanChange): string | undefined {
  const url = change.payload?.url
  if (change.kind !== 'status-page' || typeof url !== 'string' || !['create', 'update', 'replace'].includes(change.action)) return undefined
  const path = `/status/${encodeURIComponent(url)}`
  return /^https?:\/\//.test(plan.target.baseUrl) ? `${plan.target.baseUrl.replace(/\/+$/, '')}${path}` : `${path} (on \`monitors server\`)`
}
