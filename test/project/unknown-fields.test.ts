import { describe, expect, it } from 'vitest'
import { loadProject, ProjectError } from '../../src/project/index.js'
import { tempProject } from './helpers.js'

/**
 * The walk for unknown fields and the merge of the config's default tags run for every construct
 * of a project, so they are written for speed; these are what a user sees of them.
 */
describe('unknown fields at any depth, and default tags', () => {
  it('names an unknown field inside an array element and inside a nested object, with its suggestion', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `// @ts-nocheck
import { DnsCheck } from 'monitors-as-code'
new DnsCheck('deep', {
  name: 'Deep',
  request: { query: 'a.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }, { sorce: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  retryStrategy: { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2, maxDurationSeconds: 600, sameRegion: true, extra: 1 },
})
`,
    })
    const error = await loadProject({ cwd: dir }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ProjectError)
    const message = (error as ProjectError).message
    expect(message).toContain('a.check.ts › DnsCheck "deep" › request.assertions.1.sorce: is not a known field (did you mean source?)')
    expect(message).toContain('a.check.ts › DnsCheck "deep" › retryStrategy.extra: is not a known field')
    expect(message).not.toContain('request.assertions.0')
  })

  it("puts the default tags first and each tag once; defaultTags: false keeps only the check's own", async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p', defaults: { tags: ['shop', 'team-a'] } }\n`,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'
new DnsCheck('both', { name: 'Both', request: { query: 'a.example.com' }, tags: ['team-a', 'dns', 'dns'] })
new DnsCheck('none', { name: 'None', request: { query: 'b.example.com' } })
new DnsCheck('own', { name: 'Own', request: { query: 'c.example.com' }, tags: ['dns'], defaultTags: false })
`,
    })
    const project = await loadProject({ cwd: dir })
    const tags = Object.fromEntries(project.resources.map((r) => [r.logicalId, r.payload.tags]))
    expect(tags).toEqual({ both: ['shop', 'team-a', 'dns'], none: ['shop', 'team-a'], own: ['dns'] })
    expect(project.resources.every((r) => !('defaultTags' in r.payload))).toBe(true)
  })
})
