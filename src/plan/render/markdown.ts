import type { Plan, PlanChange } from '../types.js'
import { describeTarget } from '../../state/lock.js'
import { plural } from './text.js'
import { changeBody, driftNote, partialNote, renameHintText, type Line, type ViewOptions } from './view.js'

/** GitHub refuses comments over 65,536 characters; the rest is headroom for a caller's marker. */
export const MARKDOWN_LIMIT = 60_000
/** A line longer than this is shortened: one huge value must not crowd out every other change. */
const LINE_LIMIT = 400

export interface MarkdownRenderOptions {
  /** Largest output in characters (default MARKDOWN_LIMIT). */
  limit?: number
  title?: string
  /** Every field of a create, defaults too (`plan --verbose`). */
  verbose?: boolean
}

const SIGN: Record<string, string> = { create: '+', update: '~', replace: '-/+', delete: '-', move: '→', forget: '-' }

/**
 * The plan as GitHub-flavoured markdown for a pull-request comment: a summary table, then one
 * collapsible section per changed resource. Sections are added
 * whole while they fit in the size limit; what does not fit is counted in a last line, so a
 * section is never cut in the middle. Each section holds the change's fields as a ```diff code
 * block, as the text plan shows them. Secret and locked values never appear.
 */
export function renderPlanMarkdown(plan: Plan, options: MarkdownRenderOptions = {}): string {
  const limit = options.limit ?? MARKDOWN_LIMIT
  // with an environment, the title names it: two environments' comments are told apart at a glance
  const title = options.title ?? `monitors plan${plan.environment !== undefined ? `: ${plan.environment}` : ''}`
  const head: string[] = [`### ${escapeText(title)}`, '']
  if (plan.environment !== undefined) head.push(`Environment: **${escapeText(plan.environment)}**`, '')
  head.push(`Target: ${escapeText(describeTarget(plan.target))}`, '')
  const partial = partialNote(plan)
  if (partial) head.push(`> **This plan is partial:** ${escapeText(partial.replace(/^This plan is partial: /, ''))}`, '')
  if (plan.refreshOnly) head.push('> **Refresh only:** what was changed outside monitors since the last apply.', '')
  const view: ViewOptions = { verbose: options.verbose, references: plan.references, refreshOnly: plan.refreshOnly }
  const changes = plan.changes.filter((change) => change.action !== 'noop')
  const s = plan.summary
  if (changes.length === 0) {
    head.push(`**No changes.** The remote state matches the code (${plural(s.noop, 'resource')} up to date).`, '')
  } else {
    const columns: Array<[string, number]> = [
      ['Create', s.create],
      ['Update', s.update],
      ['Delete', s.delete],
      ['Move', s.move],
      ['Drift', s.drift],
    ]
    if (s.forget) columns.push(['Forget', s.forget])
    if (s.duplicate) columns.push(['Refused (duplicate)', s.duplicate])
    head.push(
      `| ${columns.map(([name]) => name).join(' | ')} |`,
      `|${columns.map(() => '---:').join('|')}|`,
      `| ${columns.map(([, n]) => n).join(' | ')} |`,
      '',
    )
  }
  // above the sections: a long plan's last sections may not fit, a hint always does
  for (const hint of plan.renames ?? []) head.push(`> **Hint:** ${escapeText(`${renameHintText(hint)}.`)}`, '')
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
    const section = renderSection(change, view)
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

function renderSection(change: PlanChange, view: ViewOptions): string {
  const sign = SIGN[change.action] ?? ''
  const name = change.name ? ` ${escapeHtml(change.name)}` : ''
  const flags = [
    change.movedFrom ? `moved from <code>${escapeHtml(change.movedFrom)}</code>` : '',
    change.changedOutside || change.drift ? '<b>drift</b>' : '',
  ].filter(Boolean)
  // Inside an HTML block (<details>, <summary>) markdown is not parsed: escape for HTML only.
  const summary = `<code>${escapeHtml(`${sign} ${change.kind} ${change.logicalId}`)}</code> ${change.action}${name}${flags.length ? ` (${flags.join(', ')})` : ''}`
  const lines = ['<details>', `<summary>${summary}</summary>`, '']
  const facts: string[] = []
  if (change.file) facts.push(`${escapeText(change.construct ?? 'construct')} in <code>${escapeText(change.file)}</code>`)
  if (change.remoteId) facts.push(`id <code>${escapeText(change.remoteId)}</code>`)
  if (facts.length) lines.push(facts.join(' · '), '')
  const note = driftNote(change, view) ?? change.reason
  if (note) lines.push(`> ${escapeText(note)}`, '')
  const body = changeBody(change, view).map(markdownLine)
  if (body.length > 0) {
    const fence = '`'.repeat(Math.max(3, ...body.map((l) => longestRun(l, '`') + 1)))
    lines.push(`${fence}diff`, ...body, fence, '')
  } else if (change.action === 'move') {
    lines.push('Renamed in code (`aliases`): the lock entry moves to the new id; no request is sent.', '')
  } else if (change.action === 'forget') {
    lines.push('`retainOnDelete`: removed from the lock only; the resource keeps running.', '')
  }
  lines.push('</details>', '', '')
  return lines.join('\n')
}

/** A body line for a ```diff block: the sign in the first column (GitHub colours + and -). */
function markdownLine(line: Line): string {
  const indent = '  '.repeat(line.depth)
  const text = `${line.comment ? '  ' : `${line.sign || ' '} `}${indent}${line.text}`
  return text.length > LINE_LIMIT ? `${text.slice(0, LINE_LIMIT)}…` : text
}

function longestRun(text: string, char: string): number {
  let best = 0
  let run = 0
  for (const ch of text) {
    run = ch === char ? run + 1 : 0
    if (run > best) best = run
  }
  return best
}

/** Text inside an HTML block or raw HTML (<summary>, <code>): HTML-escaped only. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r?\n/g, ' ')
}

/** Free markdown text (paragraphs, quotes): markdown specials backslash-escaped, then HTML specials. */
function escapeText(text: string): string {
  return escapeHtml(text.replace(/([\\`*_[\]#|~])/g, '\\$1'))
}
