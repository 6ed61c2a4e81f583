import { createRequire } from 'node:module'
import { expect } from 'vitest'

/*
 * Reads Prometheus' text format with a real parser (parse-prometheus-text-format, the port of
 * the Python client's parser), and checks what that parser lets pass: every sample line under
 * a TYPE of its family, each family declared once, no series twice, names and labels valid.
 */

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => ParsedFamily[]

export interface ParsedFamily {
  name: string
  help: string
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }>
}

export interface Sample {
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  families: Map<string, ParsedFamily>
  /** the samples of a counter or gauge family whose labels include `match` */
  samples(name: string, match?: Record<string, string>): Sample[]
  /** the one sample matching (fails when there are none or several) */
  value(name: string, match?: Record<string, string>): number
}

export function readExposition(text: string): Exposition {
  const parsed = parse(text)
  const families = new Map<string, ParsedFamily>()
  for (const family of parsed) {
    expect(families.has(family.name), `family ${family.name} declared twice`).toBe(false)
    families.set(family.name, family)
  }
  // strictness the parser does not have
  const typed = new Map<string, string>()
  const seen = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line)
    if (type) {
      expect(typed.has(type[1]), `TYPE of ${type[1]} twice`).toBe(false)
      typed.set(type[1], type[2])
      continue
    }
    if (line.startsWith('# HELP ')) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line)
    expect(sample, `not a sample line: ${line}`).not.toBeNull()
    const [, name, labels = '', value] = sample!
    const family = [...typed.keys()].find((f) => name === f || (typed.get(f) === 'histogram' && [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name)))
    expect(family, `${name} has no TYPE line before it`).toBeDefined()
    expect(Number.isNaN(Number(value)) && value !== 'NaN', `bad value in ${line}`).toBe(false)
    if (labels) expect(labels, `bad labels in ${line}`).toMatch(/^\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(,|(?=\})))*\}$/)
    expect(seen.has(`${name}${labels}`), `series twice: ${line}`).toBe(false)
    seen.add(`${name}${labels}`)
  }
  const samples = (name: string, match: Record<string, string> = {}): Sample[] => {
    const family = families.get(name)
    if (!family) return []
    return family.metrics
      .filter((m) => Object.entries(match).every(([k, v]) => m.labels?.[k] === v))
      .map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }))
  }
  return {
    families,
    samples,
    value(name, match = {}) {
      const found = samples(name, match)
      expect(found, `${name} ${JSON.stringify(match)}: ${found.length} samples`).toHaveLength(1)
      return found[0].value
    },
  }
}

/** The `_count` of a histogram series whose labels include `match`, read from the text. */
export function histogramCount(text: string, name: string, match: Record<string, string> = {}): number {
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_count`)) continue
    if (Object.entries(match).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.split(' ').at(-1))
  }
  return total
}
