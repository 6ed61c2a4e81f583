import type { FieldDiff, Plan, PlanChange } from '../types.js'
import { describeTarget } from '../../apply/lock.js'
import { SECRET_CHANGED } from '../secrets.js'
import { plural, show } from './text.js'

/** GitHub refuses comments over 65,536 characters; the rest is headroom for a caller's marker. */
export const MARKDOWN_LIMIT = 60_000
/** A cell longer than this is shortened: one huge value must not crowd out every other change. */
const CELL_LIMIT = 400

export interface MarkdownRenderOptions {
  /** Largest output in characters (default MARKDOWN_LIMIT). */
  limit?: number
  title?: string
}

const SIGN: Record<string, string> = { create: '+', update: '~', replace: '-/+', delete: '-', move: '→', forget: '-' }

/**
 * The plan as GitHub-flavoured markdown for a pull-request comment: a summary table, then one
 * collapsible section per changed resource with its field diffs as a table. Sections are added
 * whole while they fit in the size limit; what does not fit is counted in a last line, so a
 * table is never cut in the middle. Secret values never appear (the plan holds them masked).
 */
export function renderPlanMarkdown(plan: Plan, options: MarkdownRenderOptions = {}): string {
  const limit = options.limit ?? MARKDOWN_LIMIT
  const head: string[] = [`### ${options.title ?? 'monitors plan'}`, '', `Target: ${escapeText(describeTarget(plan.target))}`, '']
  const changes = plan.changes.filter((change) => change.action !== 'noop')
  const s = plan.summary
  if (changes.length === 0) {
    head.push(`**No changes.** The remote state matches the code (${plural(s.noop, 'resource')} up to date).`, '')
  } else {
    const columns: Array<[string, number]> = [['Create', s.create], ['Update', s.update], ['Delete', s.delete], ['Move', s.move], ['Drift', s.drift]]
    if (s.forget) columns.push(['Forget', s.forget])
    head.push(`| ${columns.map(([name]) => name).join(' | ')} |`, `|${columns.map(() => '---:').join('|')}|`, `| ${columns.map(([, n]) => n).join(' | ')} |`, '')
  }
  const tail: string[] = []
  const unmanaged = Object.entries(plan.unmanaged)
  if (unmanaged.length > 0) {
    const total = unmanaged.reduce((n, [, count]) => n + count, 0)
    tail.push(`_${plural(total, 'remote resource')} not in the lock left alone (${unmanaged.map(([kind, n]) => `${n} ${kind}`).join(', ')})._`, '')
  }

  let text = `${head.join('\n')}\n`
  const tailText = tail.length ? `${tail.join('\n')}\n` : ''
  let shown = 0
  for (const change of changes) {
    const section = renderSection(change)
    const left = changes.length - shown - 1
    // Room for this section and, if more follow, the line that counts the rest.
    const reserve = left > 0 ? moreLine(left).length + 2 : 0
    if (text.length + section.length + reserve + tailText.length > limit) break
    text += section
    shown++
  }
  if (shown < changes.length) text += `${moreLine(changes.length - shown)}\n\n`
  return text + tailText
}

function moreLine(n: number): string {
  return `…and ${plural(n, 'more change')} (not shown: comment size limit); run \`monitors plan\` locally for the full list.`
}

function renderSection(change: PlanChange): string {
  const sign = SIGN[change.action] ?? ''
  const name = change.name ? ` ${escapeText(change.name)}` : ''
  const flags = [
    change.movedFrom ? `moved from <code>${escapeCell(change.movedFrom)}</code>` : '',
    change.changedOutside || change.drift ? '**drift**' : '',
  ].filter(Boolean)
  const summary = `<code>${escapeCell(`${sign} ${change.kind} ${change.logicalId}`)}</code> ${change.action}${name}${flags.length ? ` (${flags.join(', ')})` : ''}`
  const lines = ['<details>', `<summary>${summary}</summary>`, '']
  const facts: string[] = []
  if (change.file) facts.push(`${change.construct ?? 'construct'} in <code>${escapeCell(change.file)}</code>`)
  if (change.remoteId) facts.push(`id <code>${escapeCell(change.remoteId)}</code>`)
  if (facts.length) lines.push(facts.join(' · '), '')
  if (change.reason) lines.push(`> ${escapeText(change.reason)}`, '')
  const diffs = change.action === 'create' ? createDiffs(change) : (change.fieldDiffs ?? [])
  if (diffs.length > 0) {
    const before = change.changedOutside ? 'Remote (now)' : 'Before'
    const after = change.changedOutside ? 'Code (after apply)' : 'After'
    lines.push(`| Field | ${before} | ${after} |`, '|---|---|---|')
    for (const d of diffs) lines.push(`| <code>${escapeCell(d.path)}</code> | ${cell(d, 'old')} | ${cell(d, 'new')} |`)
    lines.push('')
  } else if (change.action === 'move') {
    lines.push('Renamed in code (`aliases`): the lock entry moves to the new id; no request is sent.', '')
  } else if (change.action === 'forget') {
    lines.push('`retainOnDelete`: removed from the lock only; the resource keeps running.', '')
  }
  lines.push('</details>', '', '')
  return lines.join('\n')
}

function createDiffs(change: PlanChange): FieldDiff[] {
  return Object.entries(change.payload ?? {})
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([path, value]) => ({ path, new: value }))
}

function cell(d: FieldDiff, side: 'old' | 'new'): string {
  if (side === 'new' && d.new === SECRET_CHANGED) return `_${SECRET_CHANGED}_`
  if (!(side in d)) return '_(none)_'
  let text = show(d[side])
  if (text.length > CELL_LIMIT) text = `${text.slice(0, CELL_LIMIT)}…`
  return `<code>${escapeCell(text)}</code>`
}

/** Text inside a table cell and <code>: HTML-escaped, pipes and backticks neutralised, one line. */
export function escapeCell(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '&#124;')
    .replace(/`/g, '&#96;')
    .replace(/\r?\n/g, '<br>')
}

/** Free text outside tables: markdown and HTML specials escaped. */
function escapeText(text: string): string {
  return escapeCell(text).replace(/([\\*_[\]#])/g, '\\$1')
}
