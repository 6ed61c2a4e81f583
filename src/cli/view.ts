import pc from 'picocolors'
import { io, stdoutIsTTY } from './io.js'
import { useColor } from './color.js'
import type { OutputFormat } from './engine.js'

/*
 * What the operator's commands (checks, results, sessions, alerts, incidents, status-pages, env,
 * whoami) show, as data: a View of blocks (a title, fields, a table, lines, a note) and the JSON
 * document. One renderer turns it into text for a terminal (tables fitted to its width, colour),
 * plain text for a pipe (tables as tab-separated rows, no colour, nothing cut), markdown or JSON.
 */

export interface Column<R> {
  head: string
  value: (row: R) => string
  /** Cut (with …) to fit a terminal; a column without it is never cut. */
  shrink?: boolean
  /** Left out, the last one first, when the table does not fit a terminal once cut. */
  optional?: boolean
  /** Numbers: aligned right. */
  right?: boolean
  /** A whole id: shown by its first 8 characters on a terminal (shortId), whole elsewhere. */
  id?: boolean
  /** The colour of the row's cell on a terminal. */
  paint?: (row: R) => ((text: string) => string) | undefined
}

export type Block =
  | { kind: 'title'; text: string }
  | { kind: 'fields'; fields: Array<[string, string | null | undefined]> }
  | { kind: 'table'; title?: string; columns: Column<never>[]; rows: unknown[]; empty: string }
  | { kind: 'lines'; title: string; lines: string[] }
  | { kind: 'note'; text: string }

export interface View {
  blocks: Block[]
  /** The document `--format json` prints, inside `{formatVersion: 1, ok: true, …}`. */
  json: Record<string, unknown>
}

export const title = (text: string): Block => ({ kind: 'title', text })
export const fields = (list: Array<[string, string | null | undefined]>): Block => ({ kind: 'fields', fields: list })
export const lines = (heading: string, list: string[]): Block => ({ kind: 'lines', title: heading, lines: list })
export const note = (text: string): Block => ({ kind: 'note', text })
export function table<R>(columns: Column<R>[], rows: R[], options: { title?: string; empty: string }): Block {
  return { kind: 'table', columns: columns as Column<never>[], rows, ...options }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A UUID as tables show it on a terminal, 8 characters: its first ones, or for a time-ordered
 * one (version 7, a result's: its first characters are its time, alike for results of the same
 * minute) its last ones. The commands take either for the whole id (console.ts, wholeId).
 */
export function shortId(id: string): string {
  const match = UUID.exec(id)
  if (!match) return id
  return match[1] === '7' ? id.slice(-8) : id.slice(0, 8)
}

/** A terminal's width when it says none (and the width tables are checked at). */
export const DEFAULT_WIDTH = 80

/** One line: tabs and line breaks as spaces. */
const flat = (text: string) => text.replace(/[\t\r\n]+/g, ' ')

function cut(text: string, width: number): string {
  return text.length <= width ? text : width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`
}

/**
 * The widths of a table's columns on a terminal of `width`: optional columns are left out, the
 * last one first, while the table would not fit even with its cut columns at 12 characters;
 * then the widest cut columns are cut as much as needed (to 12, then to their heading). Null for
 * a column left out.
 */
export function fitColumns(columns: readonly Column<never>[], natural: number[], width: number): Array<number | null> {
  const widths: Array<number | null> = [...natural]
  const comfortable = (i: number) => Math.max(columns[i].head.length, 12)
  const used = (of: (i: number) => number) =>
    widths.reduce<number>((sum, w, i) => sum + (w === null ? 0 : of(i)), 0) + 2 * (widths.filter((w) => w !== null).length - 1)
  const least = (i: number) => (columns[i].shrink ? Math.min(widths[i] as number, comfortable(i)) : (widths[i] as number))
  for (let i = columns.length - 1; i >= 0 && used(least) > width; i--) if (columns[i].optional) widths[i] = null
  const shrinkTo = (floor: (i: number) => number) => {
    for (;;) {
      const over = used((i) => widths[i] as number) - width
      if (over <= 0) return
      const candidates = columns.map((_c, i) => i).filter((i) => columns[i].shrink && widths[i] !== null && (widths[i] as number) > floor(i))
      if (candidates.length === 0) return
      const widest = candidates.reduce((a, b) => ((widths[a] as number) >= (widths[b] as number) ? a : b))
      widths[widest] = Math.max(floor(widest), (widths[widest] as number) - over)
    }
  }
  shrinkTo(comfortable)
  shrinkTo((i) => Math.max(columns[i].head.length, 4))
  return widths
}

function terminalTable(block: Extract<Block, { kind: 'table' }>, width: number, color: boolean): string {
  const c = pc.createColors(color)
  const cells = block.rows.map((row) =>
    block.columns.map((column) => {
      const value = flat(column.value(row as never))
      return column.id ? shortId(value) : value
    }),
  )
  const natural = block.columns.map((column, i) => Math.max(column.head.length, ...cells.map((r) => r[i].length)))
  const widths = fitColumns(block.columns, natural, width)
  const shown = block.columns.map((_, i) => i).filter((i) => widths[i] !== null)
  const last = shown.at(-1)
  const line = (values: string[], row?: unknown) =>
    shown
      .map((i) => {
        const w = widths[i] as number
        const text = cut(values[i], w)
        const padded = block.columns[i].right ? text.padStart(w) : i === last ? text : text.padEnd(w)
        const paint = row === undefined ? undefined : block.columns[i].paint?.(row as never)
        return paint ? paint(padded) : padded
      })
      .join('  ')
      .trimEnd()
  return [c.bold(line(block.columns.map((column) => column.head))), ...cells.map((values, r) => line(values, block.rows[r]))].join('\n')
}

/** Words wrapped at `width`, each line after the first indented by `indent`. */
export function wrap(text: string, width: number, indent: number): string {
  const room = Math.max(20, width - indent)
  const out: string[] = []
  for (const paragraph of text.split('\n')) {
    let current = ''
    for (const word of paragraph.split(' ')) {
      let rest = word
      while (rest.length > room) {
        if (current) out.push(current)
        out.push(rest.slice(0, room))
        current = ''
        rest = rest.slice(room)
      }
      if (current === '') current = rest
      else if (current.length + 1 + rest.length <= room) current += ` ${rest}`
      else {
        out.push(current)
        current = rest
      }
    }
    out.push(current)
  }
  return out.join(`\n${' '.repeat(indent)}`)
}

/** Text for a terminal (`tty`: fitted to `width`, coloured when `color`) or for a pipe (plain, tables tab-separated, nothing cut). */
export function renderText(view: View, options: { tty: boolean; width: number; color: boolean }): { out: string; notes: string } {
  const c = pc.createColors(options.color)
  const parts: Array<{ after: Block['kind']; text: string }> = []
  const notes: string[] = []
  const { tty, width } = options
  const add = (block: Block, text: string) => parts.push({ after: block.kind, text })
  for (const block of view.blocks) {
    if (block.kind === 'title') add(block, c.bold(block.text))
    else if (block.kind === 'fields') {
      const shown = block.fields.filter((f): f is [string, string] => f[1] !== undefined && f[1] !== null && f[1] !== '')
      const pad = Math.max(0, ...shown.map(([label]) => label.length))
      add(block, shown.map(([label, value]) => (tty ? `  ${label.padEnd(pad)}  ${wrap(value, width, pad + 4)}` : `${label}: ${value}`)).join('\n'))
    } else if (block.kind === 'table') {
      const heading = block.title ? `${c.bold(block.title)}\n` : ''
      // on a pipe, a list without rows prints none (the words to stderr)
      if (block.rows.length === 0 && !tty && !block.title) notes.push(block.empty)
      else if (block.rows.length === 0) add(block, `${heading}${c.dim(block.empty)}`)
      else if (tty) add(block, `${heading}${terminalTable(block, width, options.color)}`)
      else add(block, `${heading}${block.rows.map((row) => block.columns.map((column) => flat(column.value(row as never))).join('\t')).join('\n')}`)
    } else if (block.kind === 'lines') {
      if (block.lines.length > 0) add(block, `${c.bold(block.title)}\n${block.lines.map((l) => `  ${tty ? wrap(l, width, 4) : l}`).join('\n')}`)
    } else if (tty) add(block, c.dim(wrap(block.text, width, 0)))
    else notes.push(block.text)
  }
  // a title and what follows it stay together; other blocks are a blank line apart
  const text = parts.map((part, i) => (i === 0 ? '' : parts[i - 1].after === 'title' ? '\n' : '\n\n') + part.text).join('')
  return { out: text === '' ? '' : `${text}\n`, notes: notes.map((n) => `${n}\n`).join('') }
}

const cell = (text: string) => flat(text).replace(/\|/g, '\\|')

export function renderMarkdown(view: View): string {
  const parts: string[] = []
  for (const block of view.blocks) {
    if (block.kind === 'title') parts.push(`### ${block.text}`)
    else if (block.kind === 'fields') {
      parts.push(
        block.fields
          .filter((f) => f[1] !== undefined && f[1] !== null && f[1] !== '')
          .map(([label, value]) => `- **${label}:** ${cell(String(value))}`)
          .join('\n'),
      )
    } else if (block.kind === 'table') {
      const heading = block.title ? `**${block.title}**\n\n` : ''
      if (block.rows.length === 0) parts.push(`${heading}_${block.empty}_`)
      else {
        const head = `| ${block.columns.map((c) => c.head).join(' | ')} |\n|${block.columns.map((c) => (c.right ? ' ---: ' : ' --- ')).join('|')}|`
        parts.push(`${heading}${head}\n${block.rows.map((row) => `| ${block.columns.map((c) => cell(c.value(row as never))).join(' | ')} |`).join('\n')}`)
      }
    } else if (block.kind === 'lines') {
      if (block.lines.length > 0) parts.push(`**${block.title}**\n\n\`\`\`text\n${block.lines.join('\n').replace(/```/g, '` ` `')}\n\`\`\``)
    } else parts.push(`_${block.text}_`)
  }
  return `${parts.join('\n\n')}\n`
}

/** The one format switch: a view printed as `format` asks, on this run's stdout (a pipe's notes on stderr). */
/** The colour of a state or status word on a terminal: red failing, yellow degraded, green passing, cyan waiting. */
export function stateColor(word: string): ((text: string) => string) | undefined {
  const c = pc.createColors(useColor())
  const w = word.toUpperCase()
  if (/FAIL|TIMED_OUT|CRITICAL|MAJOR|INVESTIGATING|NOT_DELIVERED|NOT-DELIVERED/.test(w)) return c.red
  if (/DEGRADED|IDENTIFIED|MEDIUM|PENDING|RUNNING|MONITORING/.test(w)) return c.yellow
  if (/PASS|DELIVERED|RESOLVED|MINOR/.test(w)) return c.green
  if (/PAUSED|NO RUNS|MAINTENANCE/.test(w)) return c.dim
  return undefined
}

export function show(view: View, format: OutputFormat | undefined, environment: string | undefined): void {
  const { stdout, stderr } = io()
  if (format === 'json') {
    const doc = { formatVersion: 1, ...(environment !== undefined ? { environment } : {}), ok: true, ...view.json }
    stdout.write(`${JSON.stringify(doc, null, 2)}\n`)
  } else if (format === 'markdown') stdout.write(renderMarkdown(view))
  else {
    const tty = stdoutIsTTY()
    const rendered = renderText(view, { tty, width: stdout.columns || DEFAULT_WIDTH, color: useColor() })
    stdout.write(rendered.out)
    if (rendered.notes) stderr.write(rendered.notes)
  }
}
