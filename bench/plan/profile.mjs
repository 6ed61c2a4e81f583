// Where a plan's time goes, in one process: load, list, compute. Used while tuning bench/plan.
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const t0 = performance.now()
const { loadProject } = await import(join(repo, 'dist/src/project/index.js'))
const { ApiClient } = await import(join(repo, 'dist/src/api/client.js'))
const { fetchRemoteState } = await import(join(repo, 'dist/src/api/resources.js'))
const { computePlan } = await import(join(repo, 'dist/src/plan/plan.js'))
const t1 = performance.now()
const dir = process.argv[2]
const project = await loadProject({ cwd: dir })
const t2 = performance.now()
const client = new ApiClient({ baseUrl: process.env.MONITORING_API_URL, apiKey: process.env.MONITORING_API_KEY })
const remote = await fetchRemoteState(client, ['dns-check'])
const t3 = performance.now()
const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
const plan = computePlan({ desired: project.resources, lock, remote, target: lock.target })
const t4 = performance.now()
console.log({ imports: t1 - t0, load: t2 - t1, fetch: t3 - t2, compute: t4 - t3, summary: plan.summary })
await client.close()
