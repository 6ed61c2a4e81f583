import { describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/index.js'
import { tempProject } from './helpers.js'

const CONFIG = `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'transpile' })\n`

describe('transpiling check files', () => {
  it('loads TypeScript with enums, type-only imports, top-level await and dynamic imports', async () => {
    const dir = tempProject({
      'monitoring.config.ts': CONFIG,
      'hosts.ts': `export enum Tier { Gold = 'gold', Silver = 'silver' }\nexport interface Host { name: string; tier: Tier }\nexport const hosts: Host[] = [{ name: 'a.example.com', tier: Tier.Gold }, { name: 'b.example.com', tier: Tier.Silver }]\n`,
      'dns.check.ts': `import { DnsCheck } from 'monitors-as-code'
import { hosts, type Host } from './hosts.js'
const extra: Host[] = await Promise.resolve([])
const { Tier } = await import('./hosts.js')
for (const host of [...hosts, ...extra]) {
  new DnsCheck(\`dns-\${host.name}\`, { name: host.name as string, request: { query: host.name }, tags: [host.tier === Tier.Gold ? 'gold' : 'other'] })
}
`,
    })
    const project = await loadProject({ cwd: dir })
    expect(project.resources.map((r) => [r.logicalId, r.payload.tags])).toEqual([
      ['dns-a.example.com', ['gold']],
      ['dns-b.example.com', ['other']],
    ])
  })

  it('loads files that use import.meta (through the fallback transpiler)', async () => {
    const dir = tempProject({
      'monitoring.config.ts': CONFIG,
      'meta.check.ts': `import { DnsCheck } from 'monitors-as-code'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
const file = basename(fileURLToPath(import.meta.url))
new DnsCheck('meta', { name: file, request: { query: 'example.com' } })
`,
    })
    const project = await loadProject({ cwd: dir })
    expect(project.resources[0]?.payload.name).toBe('meta.check.ts')
  })
})
