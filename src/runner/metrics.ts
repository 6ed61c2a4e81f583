/*
 * Prometheus' text exposition format (version 0.0.4), written by hand: counters, gauges and
 * histograms with labels, kept in memory by the server and the agent and rendered at each
 * scrape of GET /metrics (docs/metrics.md). Small on purpose: the server renders the series of
 * one account only for an account's key, which a global registry does not do.
 *
 * The format: one `# HELP` and one `# TYPE` line per family, then one line per series,
 * `name{label="value",...} value`; label values escape `\`, `"` and new lines, HELP text `\`
 * and new lines; values are Go floats (`+Inf`, `-Inf`, `NaN`). A histogram is its `_bucket`
 * series (cumulative, `le` ending with `+Inf`), `_sum` and `_count`.
 */

export type Labels = Record<string, string>

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels)
  if (entries.length === 0) return ''
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`
}

/** One sample line: `name{labels} value`. */
export function sampleLine(name: string, labels: Labels, value: number): string {
  return `${name}${labelText(labels)} ${formatValue(value)}`
}

/** A family's header: HELP and TYPE. */
export function header(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): string {
  if (!NAME.test(name)) throw new Error(`Bad metric name ${name}`)
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}`
}

const keyOf = (labels: Labels) => JSON.stringify(Object.entries(labels))

abstract class Family<S> {
  protected readonly series = new Map<string, { labels: Labels; value: S }>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`Bad metric name ${name}`)
    for (const label of labelNames) if (!LABEL.test(label) || label === 'le') throw new Error(`Bad label name ${label}`)
  }

  protected entry(labels: Labels, fresh: () => S): { labels: Labels; value: S } {
    // labels in the family's order, every one present
    const ordered: Labels = {}
    for (const name of this.labelNames) ordered[name] = labels[name] ?? ''
    const key = keyOf(ordered)
    let found = this.series.get(key)
    if (!found) {
      found = { labels: ordered, value: fresh() }
      this.series.set(key, found)
    }
    return found
  }

  /** Forgets the series whose labels `drop` accepts (a deleted check's). */
  forget(drop: (labels: Labels) => boolean): void {
    for (const [key, entry] of this.series) if (drop(entry.labels)) this.series.delete(key)
  }

  /** The lines of the family (header included), of the series `keep` accepts, labels mapped by `relabel`. */
  abstract render(keep?: (labels: Labels) => Labels | undefined): string
}

/** A value that only goes up (reset to 0 when the process starts). */
export class Counter extends Family<number> {
  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels, () => 0).value += by
  }

  get(labels: Labels = {}): number {
    return this.entry(labels, () => 0).value
  }

  render(keep: (labels: Labels) => Labels | undefined = (l) => l): string {
    const lines = [header(this.name, 'counter', this.help)]
    for (const { labels, value } of this.series.values()) {
      const shown = keep(labels)
      if (shown) lines.push(sampleLine(this.name, shown, value))
    }
    return lines.join('\n')
  }
}

/** A value that goes up and down. */
export class Gauge extends Family<number> {
  set(labels: Labels, value: number): void {
    this.entry(labels, () => 0).value = value
  }

  render(keep: (labels: Labels) => Labels | undefined = (l) => l): string {
    const lines = [header(this.name, 'gauge', this.help)]
    for (const { labels, value } of this.series.values()) {
      const shown = keep(labels)
      if (shown) lines.push(sampleLine(this.name, shown, value))
    }
    return lines.join('\n')
  }
}

interface HistogramValue {
  buckets: number[]
  sum: number
  count: number
}

/** Observations counted in buckets (upper bounds, in the metric's unit), with their sum and count. */
export class Histogram extends Family<HistogramValue> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames)
  }

  observe(labels: Labels, value: number): void {
    const entry = this.entry(labels, () => ({ buckets: this.bounds.map(() => 0), sum: 0, count: 0 })).value
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]) entry.buckets[i]++
    entry.sum += value
    entry.count++
  }

  render(keep: (labels: Labels) => Labels | undefined = (l) => l): string {
    const lines = [header(this.name, 'histogram', this.help)]
    for (const { labels, value } of this.series.values()) {
      const shown = keep(labels)
      if (!shown) continue
      this.bounds.forEach((bound, i) => lines.push(sampleLine(`${this.name}_bucket`, { ...shown, le: formatValue(bound) }, value.buckets[i])))
      lines.push(sampleLine(`${this.name}_bucket`, { ...shown, le: '+Inf' }, value.count))
      lines.push(sampleLine(`${this.name}_sum`, shown, value.sum))
      lines.push(sampleLine(`${this.name}_count`, shown, value.count))
    }
    return lines.join('\n')
  }
}

/** Seconds, from 5 ms to 60 s: run lags, requests, store operations. */
export const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const

/** What a finished run counts as: `failed` (failures or errors), `degraded`, else `passed`. */
export function runStatus(result: { hasFailures: boolean; hasErrors: boolean; isDegraded: boolean }): 'passed' | 'degraded' | 'failed' {
  if (result.hasFailures || result.hasErrors) return 'failed'
  return result.isDegraded ? 'degraded' : 'passed'
}

/** The phases of a run's details (`timings` of an API, URL or TCP run, ms) but their total; {} for the others. */
export function runPhases(details: unknown): Record<string, number> {
  const timings = (details as { timings?: Record<string, unknown> | null } | null | undefined)?.timings
  const out: Record<string, number> = {}
  if (!timings || typeof timings !== 'object') return out
  for (const [phase, ms] of Object.entries(timings)) {
    if (phase !== 'total' && typeof ms === 'number' && Number.isFinite(ms)) out[phase] = ms
  }
  return out
}
