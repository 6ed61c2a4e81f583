import { fileURLToPath } from 'node:url'

/** One frame of a V8 stack trace. */
export interface Frame {
  fn?: string
  file: string
  line: number
  column: number
}

const FRAME = /^\s*at (?:(.*?) \()?((?:file:\/\/|\/|[A-Za-z]:[\\/]|node:)[^()]*?):(\d+):(\d+)\)?\s*$/

/** Frames of a V8 stack string (`at fn (file:line:col)` lines); other lines are skipped. */
export function parseStack(stack: string | undefined): Frame[] {
  if (!stack) return []
  const frames: Frame[] = []
  for (const lineText of stack.split('\n')) {
    const m = FRAME.exec(lineText)
    if (!m) continue
    let file = m[2]
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file)
      } catch {
        /* keep as is */
      }
    }
    frames.push({ fn: m[1] || undefined, file, line: Number(m[3]), column: Number(m[4]) })
  }
  return frames
}

/** True for frames of Node itself, of installed packages and of the module loader. */
export function isInternalFrame(frame: Frame): boolean {
  return frame.file.startsWith('node:') || frame.file.includes('/node_modules/') || frame.file.includes('\\node_modules\\')
}

export type CallSite = {
  getFileName(): string | undefined | null
  getLineNumber(): number | null
  getColumnNumber(): number | null
  getFunctionName(): string | null
}

/**
 * Frames above `fn` (e.g. the caller of `new fn()`), read from V8's structured call sites:
 * much cheaper than formatting and parsing a stack string. A frame's line and column are worked
 * out when first read: V8 finds them by scanning the function's source positions, which in a
 * check file of 1,000 constructs (one long top-level function) cost more than the rest of the
 * construct's loading, and they are only needed for the few problems that name a line.
 */
export function callSites(fn: Function, limit: number): Frame[] {
  const frames: Frame[] = []
  for (const site of capture(fn, limit)) {
    const file = fileOf(site)
    if (file) frames.push(lazyFrame(site, file))
  }
  return frames
}

function lazyFrame(site: CallSite, file: string): Frame {
  let fn: string | undefined | null = null
  let line: number | undefined
  let column: number | undefined
  return {
    file,
    get fn() {
      if (fn === null) fn = site.getFunctionName() ?? undefined
      return fn
    },
    get line() {
      line ??= site.getLineNumber() ?? 0
      return line
    },
    get column() {
      column ??= site.getColumnNumber() ?? 0
      return column
    },
  }
}

/**
 * The first frame above `fn` that has a file, as V8's own call site (no frame object, no
 * getters), with its file as a path.
 */
export function callerSite(fn: Function): { site: CallSite; file: string } | undefined {
  for (const site of capture(fn, 2)) {
    const file = fileOf(site)
    if (file) return { site, file }
  }
  return undefined
}

/** V8's call sites of the `limit` frames above `fn`. */
function capture(fn: Function, limit: number): CallSite[] {
  const holder: { stack?: unknown } = {}
  const prepare = Error.prepareStackTrace
  const stackLimit = Error.stackTraceLimit
  try {
    Error.prepareStackTrace = returnSites
    Error.stackTraceLimit = limit
    Error.captureStackTrace(holder, fn)
    return (holder.stack as CallSite[] | undefined) ?? []
  } finally {
    Error.prepareStackTrace = prepare
    Error.stackTraceLimit = stackLimit
  }
}

/** A call site's file as a path (a `file://` URL converted); undefined when it has none. */
function fileOf(site: CallSite): string | undefined {
  const file = site.getFileName()
  if (!file) return undefined
  if (!file.startsWith('file://')) return file
  try {
    return fileURLToPath(file)
  } catch {
    return file
  }
}

const returnSites = (_error: Error, sites: CallSite[]) => sites
