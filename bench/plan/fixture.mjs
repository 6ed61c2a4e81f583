/**
 * The project the plan benches measure: N DNS checks in 10 files, and a way to bring a server
 * and a lock file to "already applied" quickly. Seeding with `monitors apply` would measure the
 * apply; here the creates are sent in-process, many at a time, and the lock is written with the
 * same entries an apply records (so a plan afterwards says "No changes.").
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const FILES = 10

/**
 * Writes monitoring.config.ts and checks/batch-*.check.ts with `n` checks in `dir` (10 files):
 * DNS checks, and with `icmpEvery: k` an ICMP check in place of every k-th.
 */
export function writeProject(repo, dir, n, { files = FILES, projectName = 'bench', icmpEvery } = {}) {
  mkdirSync(join(dir, 'node_modules'), { recursive: true })
  symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  writeFileSync(
    join(dir, 'monitoring.config.ts'),
    `import { defineConfig } from 'monitors-as-code'
export default defineConfig({ projectName: '${projectName}', checkMatch: 'checks/**/*.check.ts', defaults: { locations: ['eu-west-1', 'us-east-1'], tags: ['bench'] } })
`,
  )
  mkdirSync(join(dir, 'checks'), { recursive: true })
  for (let f = 0; f < files; f++) {
    const lines = [`import { ${icmpEvery ? 'DnsCheck, IcmpCheck' : 'DnsCheck'} } from 'monitors-as-code'`, '']
    for (let i = f; i < n; i += files) {
      if (icmpEvery && i % icmpEvery === icmpEvery - 1) {
        lines.push(
          `new IcmpCheck('ping-${i}', { name: 'Ping ${i}', request: { hostname: 'host-${i}.example.com' }, frequency: ${[5, 10, 15][i % 3]}, tags: ['team-${i % 7}'] })`,
        )
        continue
      }
      lines.push(`new DnsCheck('dns-${i}', {
  name: 'DNS ${i}',
  request: { query: 'host-${i}.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  frequency: ${[1, 5, 10, 15, 30][i % 5]},
  tags: ['team-${i % 7}'],
})`)
    }
    writeFileSync(join(dir, 'checks', `batch-${f}.check.ts`), `${lines.join('\n')}\n`)
  }
}

/**
 * Creates every resource of the project in `dir` on the server at `baseUrl` and writes the
 * lock file an apply would have written (monitoring.lock.json beside the config).
 * Resolves to the number of resources created.
 */
export async function seed(repo, dir, { baseUrl, apiKey, accountId, concurrency = 32 }) {
  const { loadProject } = await import(join(repo, 'dist/src/project/index.js'))
  const { ApiClient } = await import(join(repo, 'dist/src/api/client.js'))
  const { createResource } = await import(join(repo, 'dist/src/api/resources.js'))
  const { appliedHash } = await import(join(repo, 'dist/src/resources/hashes.js'))
  const { displayName } = await import(join(repo, 'dist/src/resources/registry.js'))
  const { emptyLock, lockKey, writeLock, LOCK_FILE_NAME } = await import(join(repo, 'dist/src/state/lock.js'))
  const { targetId } = await import(join(repo, 'dist/src/cli/target.js'))

  const project = await loadProject({ cwd: dir })
  const client = new ApiClient({ baseUrl, apiKey, accountId })
  const lock = emptyLock({ id: targetId(baseUrl), baseUrl: client.baseUrl, ...(accountId ? { accountId } : {}) })
  const queue = project.resources.filter((r) => r.refs.length === 0)
  if (queue.length !== project.resources.length) throw new Error('the bench project is expected to hold no references')
  let next = 0
  const worker = async () => {
    while (next < queue.length) {
      const resource = queue[next++]
      const { remoteId } = await createResource(client, resource.kind, resource.payload)
      const entry = { kind: resource.kind, logicalId: resource.logicalId, remoteId, appliedHash: appliedHash(resource.kind, resource.payload) }
      const name = displayName(resource.kind, resource.payload)
      if (name !== undefined) entry.name = name
      lock.resources[lockKey(resource.kind, resource.logicalId)] = entry
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, worker))
  } finally {
    await client.close()
  }
  writeLock(join(dir, LOCK_FILE_NAME), lock)
  return queue.length
}
