#!/usr/bin/env node
// Where a CPU profile's time goes (node --cpu-prof, e.g. bench/runner/run.mjs --profile DIR):
// self time per function and total (inclusive) time per function of the project, top N.
//   node bench/runner/profile-summary.mjs FILE.cpuprofile [N]
import { readFileSync } from 'node:fs'

const [file, count = '25'] = process.argv.slice(2)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const self = new Map()
const deltas = profile.timeDeltas
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (deltas[i] ?? 0))
const total = [...self.values()].reduce((a, b) => a + b, 0)
const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`
const selfBy = new Map()
const inclusive = new Map()
for (const [id, t] of self) {
  const n = byId.get(id)
  selfBy.set(name(n), (selfBy.get(name(n)) ?? 0) + t)
  const seen = new Set()
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = name(byId.get(cur))
    if (seen.has(k)) continue
    seen.add(k)
    inclusive.set(k, (inclusive.get(k) ?? 0) + t)
  }
}
const pct = (t) => `${((t / total) * 100).toFixed(1).padStart(5)} %`
console.log(`total ${(total / 1e6).toFixed(1)} s sampled`)
console.log('-- self')
for (const [k, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) console.log(pct(t), k)
console.log('-- inclusive (project code)')
for (const [k, t] of [...inclusive]
  .filter(([k]) => k.includes('dist/'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(count)))
  console.log(pct(t), k)
