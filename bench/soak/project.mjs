// The soak's project, as a team writes one: `count` checks every minute in a location the
// servers' runners serve (eu-west-1) and one the agent serves (eu-central-1: it stands for the
// private network), both at each due time (runParallel), in 10 files: DNS, TCP, API and URL checks against the targets on
// loopback, and `flaky` API checks (eu-west-1 only) against the target that goes down, which
// alert a webhook (an inline channel of theirs).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const LOCATIONS = ['eu-west-1', 'eu-central-1']
/** The location the agent serves. */
export const AGENT_LOCATION = 'eu-central-1'
const FILES = 10

/** The kind of the i-th check (the flaky ones first): 50 % DNS, 20 % TCP, 20 % API, 10 % URL. */
export function kindOf(i, flaky) {
  if (i < flaky) return 'flaky'
  const k = i % 10
  return k < 5 ? 'dns' : k < 7 ? 'tcp' : k < 9 ? 'api' : 'url'
}

export function writeProject(repo, dir, { count, flaky, ports }) {
  mkdirSync(join(dir, 'node_modules'), { recursive: true })
  symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  writeFileSync(
    join(dir, 'monitoring.config.ts'),
    `import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'soak',
  checkMatch: 'checks/**/*.check.ts',
  defaults: { locations: ${JSON.stringify(LOCATIONS)}, runParallel: true, frequency: 1, tags: ['soak'], retryStrategy: { type: 'NO_RETRIES' } },
})
`,
  )
  mkdirSync(join(dir, 'checks'), { recursive: true })
  for (let f = 0; f < FILES; f++) {
    const lines = [`import { ApiCheck, DnsCheck, TcpCheck, UrlCheck } from 'monitors-as-code'`, '']
    for (let i = f; i < count; i += FILES) lines.push(checkCode(i, kindOf(i, flaky), ports))
    writeFileSync(join(dir, 'checks', `batch-${f}.check.ts`), `${lines.join('\n')}\n`)
  }
}

function checkCode(i, kind, ports) {
  const ok = `[{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }]`
  switch (kind) {
    case 'flaky':
      // one location: its runs follow one another, so its target going down and up again is one alert and one recovery
      return `new ApiCheck('flaky-${i}', { name: 'Flaky ${i}', locations: ['eu-west-1'], alertChannels: { webhook: [{ name: 'Soak hook', url: 'http://127.0.0.1:${ports.webPort}/hook' }] }, request: { method: 'GET', url: 'http://127.0.0.1:${ports.flakyPort}/ok', assertions: ${ok} } })`
    case 'dns':
      return `new DnsCheck('dns-${i}', { name: 'DNS ${i}', request: { query: 'host-${i}.soak.test', recordType: 'A', nameServer: '127.0.0.1', port: ${ports.dnsPort} } })`
    case 'tcp':
      return `new TcpCheck('tcp-${i}', { name: 'TCP ${i}', request: { hostname: '127.0.0.1', port: ${ports.tcpPort}, data: 'PING\\r\\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] } })`
    case 'api':
      return `new ApiCheck('api-${i}', { name: 'API ${i}', request: { method: 'GET', url: 'http://127.0.0.1:${ports.webPort}/ok?check=${i}', assertions: ${ok} } })`
    default:
      return `new UrlCheck('url-${i}', { name: 'URL ${i}', request: { url: 'http://127.0.0.1:${ports.webPort}/ok?page=${i}', assertions: ${ok} } })`
  }
}
