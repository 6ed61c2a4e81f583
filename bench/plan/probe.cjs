// Preloaded with `node --require` by the benches: when the process exits, writes its peak RSS
// (KiB) and the CPU time it used (user + system, ms) as JSON to the file MONITORS_BENCH_PROBE
// names. CPU time is the figure to compare on a machine other work shares: wall time there
// also counts the waits for a core. CommonJS, so that it does not start Node's ES module loader
// in a process that would not start it otherwise (`bin/monitors.cjs` does not): `--import` would
// add 10 to 20 ms to every run of the CLI measured.
const { writeFileSync } = require('node:fs')

const file = process.env.MONITORS_BENCH_PROBE
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage()
    writeFileSync(file, JSON.stringify({ maxRssKiB: usage.maxRSS, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 }))
  })
}
