import type { TextSink } from './io.js'

/**
 * What a long apply (or destroy, or trigger) says while it runs, on stderr:
 * - on a terminal, one line rewritten in place: the operations done of the total, per resource
 *   kind, and while the rate limit holds requests back, "waiting N s for the rate limit";
 * - without one (CI), the same as a plain line every few seconds (`MONITORS_PROGRESS_INTERVAL`,
 *   default 10), never a control character;
 * - with `--format json`, nothing at all, on a terminal too: the run is read by a program.
 */
export type ProgressMode = 'tty' | 'lines' | 'off'

/** Seconds between two plain progress lines without a terminal. */
export const DEFAULT_PROGRESS_INTERVAL_S = 10

/** How often the terminal line is brought up to date (the countdown of a wait). */
const TTY_REFRESH_MS = 250

export interface ProgressOptions {
  /** `Applying` or `Destroying`. */
  verb: string
  /** Operations per resource kind, in the order shown (the plan's). */
  totals: ReadonlyArray<readonly [kind: string, total: number]>
  /** Where it is written: stderr. */
  stream: TextSink
  mode: ProgressMode
  /** Milliseconds between two plain lines (mode `lines`). */
  intervalMs?: number
  /** Milliseconds left of a wait for the rate limit under way, or 0. */
  waitMs?: () => number
  /** What is under way now, said after the counts (`waiting for Slow API (42 s)`), or ''. */
  detail?: () => string
  now?: () => number
  /** Start the timers that redraw and print (default true); a test drives `tick()` itself. */
  timers?: boolean
}

/** Whether and how progress is shown: see ProgressMode. */
export function progressMode(options: { stream: TextSink; format: string | undefined; env: NodeJS.ProcessEnv }): { mode: ProgressMode; intervalMs: number } {
  const raw = options.env.MONITORS_PROGRESS_INTERVAL
  const seconds = raw !== undefined && raw.trim() !== '' && Number.isFinite(Number(raw)) && Number(raw) >= 0 ? Number(raw) : DEFAULT_PROGRESS_INTERVAL_S
  const intervalMs = Math.round(seconds * 1000)
  if (options.format === 'json') return { mode: 'off', intervalMs }
  // a dumb terminal cannot rewrite a line: plain lines there
  if (options.stream.isTTY === true && options.env.TERM !== 'dumb') return { mode: 'tty', intervalMs }
  if (intervalMs === 0) return { mode: 'off', intervalMs }
  return { mode: 'lines', intervalMs }
}

export class Progress {
  private readonly done = new Map<string, number>()
  private readonly totals: ReadonlyArray<readonly [string, number]>
  private failed = 0
  private readonly started: number
  private shown = ''
  private drawn = false
  private stopped = false
  private timer: ReturnType<typeof setInterval> | undefined
  private readonly now: () => number

  constructor(private readonly options: ProgressOptions) {
    this.totals = options.totals.filter(([, n]) => n > 0)
    this.now = options.now ?? Date.now
    this.started = this.now()
    if (options.mode === 'off' || options.timers === false) return
    const every = options.mode === 'tty' ? TTY_REFRESH_MS : Math.max(1, options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_S * 1000)
    this.timer = setInterval(() => this.tick(), every)
    this.timer.unref?.()
  }

  /** One operation finished (successfully or not). */
  finished(kind: string, ok: boolean): void {
    this.done.set(kind, (this.done.get(kind) ?? 0) + 1)
    if (!ok) this.failed++
  }

  /**
   * The status: `Applying: 12/40 done (dns-check 5/10, icmp-check 7/30), 1 failed; waiting 12 s
   * for the rate limit`; with `elapsed`, the time since the start too.
   */
  text(elapsed = false): string {
    const total = this.totals.reduce((n, [, t]) => n + t, 0)
    const done = this.totals.reduce((n, [kind]) => n + (this.done.get(kind) ?? 0), 0)
    const kinds = this.totals.length > 0 ? ` (${this.totals.map(([kind, t]) => `${kind} ${this.done.get(kind) ?? 0}/${t}`).join(', ')})` : ''
    const failed = this.failed > 0 ? `, ${this.failed} failed` : ''
    const since = elapsed ? `, ${Math.floor((this.now() - this.started) / 1000)} s elapsed` : ''
    const waitMs = this.options.waitMs?.() ?? 0
    const waiting = waitMs > 0 ? `; waiting ${Math.ceil(waitMs / 1000)} s for the rate limit` : ''
    const detail = this.options.detail?.() ?? ''
    return `${this.options.verb}: ${done}/${total} done${kinds}${failed}${since}${waiting}${detail ? `; ${detail}` : ''}`
  }

  /** The timer's work: on a terminal, redraw when the line changed; without one, print a line. */
  tick(): void {
    if (this.stopped) return
    if (this.options.mode === 'tty') this.draw()
    else if (this.options.mode === 'lines') this.options.stream.write(`${this.text(true)}\n`)
  }

  /**
   * Writes other output (the lines of finished operations) without tearing the terminal line:
   * it is cleared first and drawn again after.
   */
  around(write: () => void): void {
    if (this.options.mode !== 'tty' || this.stopped) {
      write()
      return
    }
    this.clear()
    write()
    this.draw(true)
  }

  /** Ends the display; the terminal line is cleared (the summary that follows says how it went). */
  stop(): void {
    if (this.stopped) return
    if (this.timer) clearInterval(this.timer)
    if (this.options.mode === 'tty') this.clear()
    this.stopped = true
  }

  private draw(force = false): void {
    // one line, never wrapped: a wrapped line cannot be rewritten in place
    const width = Math.max(20, (this.options.stream.columns || 80) - 1)
    let line = this.text()
    if (line.length > width) line = `${line.slice(0, width - 1)}…`
    if (!force && this.drawn && line === this.shown) return
    this.options.stream.write(`\r${line}\x1b[K`)
    this.shown = line
    this.drawn = true
  }

  private clear(): void {
    if (!this.drawn) return
    this.options.stream.write('\r\x1b[K')
    this.drawn = false
    this.shown = ''
  }
}
