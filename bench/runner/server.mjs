// The server under test of bench/runner/run.mjs, in its own process (so its CPU is its own, and
// `--profile` can run it under node --cpu-prof). Driven over IPC:
//   { start: { dbPath, key, speed, concurrency, warmupMs, retentionDays } } → { ready: true }
//   { status: true } → { status: { caughtUp } }   (seconds until the start-up backlog was behind it, or null)
//   { mark: true }  → { marked: {...} }   (the start of the measured window)
//   { stop: true }  → { stopped: {...} }  then exits
import { pathToFileURL } from 'node:url'

const entry = process.argv[2]
const { startLocalServer } = await import(pathToFileURL(entry).href)

let server
let lags = new Float64Array(1 << 16)
let lagCount = 0
let measuring = false
let backlog = 0
let lastBacklogStart = 0
let started = 0
let realStart = 0
let virtualStart = 0
let speed = 1
let markCompleted = 0
let markCpu
let markTime = 0
let caughtUpAt = 0

function pushLag(value) {
  if (lagCount === lags.length) {
    const bigger = new Float64Array(lags.length * 2)
    bigger.set(lags)
    lags = bigger
  }
  lags[lagCount++] = value
}

function percentile(sorted, count, p) {
  if (count === 0) return NaN
  return sorted[Math.min(count - 1, Math.floor((p / 100) * count))]
}

process.on('message', async (message) => {
  if (message.start) {
    const o = message.start
    speed = o.speed
    realStart = Date.now()
    // a storage phase may start the clock later (never earlier: the runs already stored would not be due)
    virtualStart = Math.max(realStart, o.virtualStart ?? 0)
    const clock = speed === 1 ? Date.now : () => virtualStart + (Date.now() - realStart) * speed
    server = await startLocalServer({
      apiKeys: [{ key: o.key, accountId: 'bench' }],
      rateLimit: { max: 1e9, timeWindowMs: 60_000 },
      dbPath: o.dbPath,
      runner: true,
      retentionDays: o.retentionDays,
      clock,
      schedulerOptions: {
        ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
        onRunStart: (run, startedAt) => {
          if (run.dueAt < virtualStart) {
            backlog++
            lastBacklogStart = Date.now()
          } else {
            started++
            // the start-up backlog is behind it once a run due after the start begins within 1 s of its due time
            if (caughtUpAt === 0 && (startedAt - run.dueAt) / speed < 1000) caughtUpAt = Date.now()
            // the lag of runs due inside the measured window (after the warm-up)
            if (measuring) pushLag((startedAt - run.dueAt) / speed)
          }
        },
      },
    })
    process.send({ ready: true })
  } else if (message.status) {
    process.send({ status: { caughtUp: caughtUpAt === 0 ? null : (caughtUpAt - realStart) / 1000 } })
  } else if (message.mark) {
    measuring = true
    markCompleted = server.completedRuns()
    markCpu = process.cpuUsage()
    markTime = Date.now()
    process.send({ marked: { completed: markCompleted } })
  } else if (message.stop) {
    const elapsed = (Date.now() - markTime) / 1000
    const cpu = process.cpuUsage(markCpu)
    const completed = server.completedRuns() - markCompleted
    measuring = false
    // drift: the median lag of the window's last tenth of runs against its first tenth (in start order)
    const tenth = Math.max(1, Math.floor(lagCount / 10))
    const median = (part) => percentile(Float64Array.from(part).sort(), part.length, 50)
    const driftMs = lagCount < 20 ? NaN : median(lags.subarray(lagCount - tenth, lagCount)) - median(lags.subarray(0, tenth))
    const sorted = lags.subarray(0, lagCount).sort()
    const summary = {
      elapsed,
      completed,
      started,
      backlog,
      backlogDrainedAfter: lastBacklogStart === 0 ? 0 : (lastBacklogStart - realStart) / 1000,
      caughtUpAfter: caughtUpAt === 0 ? null : (caughtUpAt - realStart) / 1000,
      cpuPercent: ((cpu.user + cpu.system) / 1000 / (elapsed * 1000)) * 100,
      cpuMsPerRun: completed === 0 ? NaN : (cpu.user + cpu.system) / 1000 / completed,
      lagCount,
      lagP50: percentile(sorted, lagCount, 50),
      lagP99: percentile(sorted, lagCount, 99),
      lagMax: lagCount === 0 ? NaN : sorted[lagCount - 1],
      driftMs,
      rssMiB: process.memoryUsage().rss / 1048576,
    }
    await server.close()
    process.send({ stopped: summary }, () => process.exit(0))
  }
})
process.send({ loaded: true })
