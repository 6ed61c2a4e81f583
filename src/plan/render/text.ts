import pc from 'picocolors'
import { RESOURCE_KINDS } from '../../project/types.js'
import type { FieldDiff, Plan, PlanChange } from '../types.js'
import { describeTarget } from '../../apply/lock.js'
import { SECRET_CHANGED, SECRET_MASK } from '../secrets.js'

export interface TextRenderOptions {
  color?: boolean
  /** What follows `No changes.` when there is nothing to do. */
  noChanges?: string
}

type Colors = ReturnType<typeof pc.createColors>

const PLACEHOLDER = new RegExp(`^(${RESOURCE_KINDS.join('|')}):(.+)$`)

/**
 * The plan as text for a terminal or a CI log, in Terraform's manner: `+` create, `~` update
 * (old → new per field), `-/+` replace, `-` delete, then the summary line.
 */
export function renderPlanText(plan: Plan, options: TextRenderOptions = {}): string {
  const c = pc.createColors(options.color ?? false)
  const lines: string[] = []
  const changes = plan.changes.filter((change) => change.action !== 'noop')
  if (changes.length === 0) {
    lines.push(`${c.green('No changes.')} ${options.noChanges ?? `The remote state matches the code (${plural(plan.summary.noop, 'resource')} up to date).`}`)
  } else {
    lines.push(`Target: ${describeTarget(plan.target)}`)
    lines.push('')
    for (const change of changes) lines.push(...renderChange(change, c), '')
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
  return `${c.bold('Plan:')} ${s.create} to create, ${s.update} to update, ${s.delete} to delete${extra.length ? `, ${extra.join(', ')}` : ''}.${drift}`
}

function renderChange(change: PlanChange, c: Colors): string[] {
  const title = `${change.kind} ${c.bold(change.logicalId)}`
  const where = change.file ? c.dim(` (${change.construct ? `${change.construct} in ` : ''}${change.file})`) : ''
  const id = change.remoteId ? c.dim(` id ${change.remoteId}`) : ''
  const moved = change.movedFrom ? ` ${c.cyan(`(moved from ${change.movedFrom})`)}` : ''
  const out: string[] = []
  switch (change.action) {
    case 'create':
      out.push(`${c.green('+')} ${title}${moved}${where}${change.drift ? ` ${c.yellow('(drift)')}` : ''}${change.duplicateOf ? ` ${c.red('(duplicate)')}` : ''}`)
      if (change.reason) out.push(`    ${c.yellow(`# ${change.reason}`)}`)
      for (const [key, value] of Object.entries(change.payload ?? {})) {
        if (value === undefined || value === null) continue
        out.push(`    ${c.green('+')} ${key}: ${show(value)}`)
      }
      break
    case 'update':
      out.push(`${c.yellow('~')} ${title}${moved}${where}${id}${change.changedOutside ? ` ${c.yellow('(drift)')}` : ''}`)
      if (change.changedOutside) out.push(`    ${c.yellow(`# ${change.reason ?? 'changed outside monitors'}; values read remote → code`)}`)
      else if (change.reason) out.push(`    ${c.yellow(`# ${change.reason}`)}`)
      for (const d of change.fieldDiffs ?? []) out.push(`    ${renderDiff(d, c)}`)
      break
    case 'move':
      out.push(`${c.cyan('→')} ${title}${moved}${where}${id}`)
      out.push(`    ${c.dim('# renamed in code (aliases): the lock entry moves; no request is sent')}`)
      break
    case 'forget':
      out.push(`${c.yellow('-')} ${title}${change.name ? ` "${change.name}"` : ''}${id} ${c.yellow('(forget)')}`)
      if (change.reason) out.push(`    ${c.yellow(`# ${change.reason}`)}`)
      break
    case 'replace':
      out.push(`${c.red('-')}/${c.green('+')} ${title}${where}${id} ${c.red('(replace)')}`)
      if (change.reason) out.push(`    ${c.yellow(`# ${change.reason}`)}`)
      for (const d of change.fieldDiffs ?? []) out.push(`    ${renderDiff(d, c)}`)
      break
    case 'delete':
      out.push(`${c.red('-')} ${title}${change.name ? ` "${change.name}"` : ''}${id}${change.drift ? ` ${c.yellow('(drift)')}` : ''}`)
      if (change.reason) out.push(`    ${c.yellow(`# ${change.reason}`)}`)
      break
  }
  return out
}

function renderDiff(d: FieldDiff, c: Colors): string {
  if (d.new === SECRET_CHANGED) return `${c.yellow('~')} ${d.path}: ${SECRET_CHANGED}`
  if (!('old' in d)) return `${c.green('+')} ${d.path}: ${show(d.new)}`
  if (!('new' in d)) return `${c.red('-')} ${d.path}: ${c.red(show(d.old))}`
  return `${c.yellow('~')} ${d.path}: ${show(d.old)} → ${show(d.new)}`
}

/** A value in one line; references not known yet read `(known after apply)`. */
export function show(value: unknown): string {
  const text = JSON.stringify(value, (_key, v) => (typeof v === 'string' && PLACEHOLDER.test(v) ? `(known after apply: ${v})` : v))
  return (text ?? String(value)).replaceAll(JSON.stringify(SECRET_MASK), SECRET_MASK)
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
