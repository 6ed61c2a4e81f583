/**
 * Records results into a database from a process of its own (as a second server or an agent's
 * server would): `jiti record-results.ts <dbPath or postgres:// URL> <jobs.json>`, where jobs.json holds
 * [{check, result}]. Prints the outcomes as JSON.
 */
import { readFileSync } from 'node:fs'
import { openStore } from '../../src/server/index.js'
import { recordResult, type RecordableCheck, type RecordableResult } from '../../src/server/results/index.js'

const [dbPath, jobsPath] = process.argv.slice(2)
const jobs = JSON.parse(readFileSync(jobsPath, 'utf8')) as Array<{ check: RecordableCheck; result: RecordableResult }>
const store = await openStore(dbPath)
const outcomes = await Promise.all(jobs.map((job) => recordResult(store, job.check, job.result)))
await store.close()
process.stdout.write(JSON.stringify(outcomes))
