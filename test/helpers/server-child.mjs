/**
 * A server in a process of its own, as `monitors server` runs one, with options a test chooses
 * (short leases and ticks): `node server-child.mjs '<LocalServerOptions as JSON>'`. Prints
 * `listening on <url>` once it serves, its log lines after; SIGTERM closes it gracefully and
 * exits 0. An error nothing handles ends it as it would end `monitors server`, with exit code 1.
 * Runs the built server (dist/), like the CLI's tests.
 */
import { startLocalServer } from '../../dist/src/server/index.js'

const options = JSON.parse(process.argv[2] ?? '{}')
const server = await startLocalServer({
  ...options,
  log: false,
  schedulerOptions: { ...options.schedulerOptions, log: (line) => process.stderr.write(`${line}\n`) },
})
process.stdout.write(`listening on ${server.url}\n`)
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0))
})
