/**
 * TcpCheck's rules, checked while the project loads (before any request), each reported as
 * file › construct › field: message.
 */
import { describe, expect, it } from 'vitest'
import { loadProject, ProjectError } from '../../src/project/index.js'
import { tempProject } from './helpers.js'

async function problems(check: string): Promise<string[]> {
  const dir = tempProject({
    'monitoring.config.ts': `export default { projectName: 'p' }\n`,
    'a.check.ts': `// @ts-nocheck\nimport { TcpCheck } from 'monitors-as-code'\n${check}\n`,
  })
  const error = await loadProject({ cwd: dir }).then(
    () => undefined,
    (e: unknown) => e,
  )
  if (error === undefined) return []
  expect(error).toBeInstanceOf(ProjectError)
  return (error as ProjectError).message.split('\n').slice(0, -1)
}

describe('TcpCheck rules', () => {
  it('a valid check loads with the reference defaults', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `import { TcpCheck } from 'monitors-as-code'\nnew TcpCheck('redis', { name: 'Redis', request: { hostname: 'redis.example.com', port: 6379 }, frequency: 0, frequencyOffset: 20 })\n`,
    })
    const project = await loadProject({ cwd: dir })
    const [resource] = project.resources
    expect(resource.kind).toBe('tcp-check')
    expect(resource.payload).toMatchObject({
      checkType: 'TCP',
      frequency: 0,
      frequencyOffset: 20,
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: { hostname: 'redis.example.com', port: 6379, data: null, ipFamily: 'IPv4', assertions: [] },
    })
  })

  it('every field rule is reported before any request', async () => {
    expect(
      await problems(
        [
          `new TcpCheck('url', { name: 'T', request: { hostname: 'tcp://db.example.com', port: 5432 } })`,
          `new TcpCheck('hostport', { name: 'T', request: { hostname: 'db.example.com:5432', port: 5432 } })`,
          `new TcpCheck('noport', { name: 'T', request: { hostname: 'db.example.com' } })`,
          `new TcpCheck('port', { name: 'T', request: { hostname: 'db.example.com', port: 70000 } })`,
          `new TcpCheck('data', { name: 'T', request: { hostname: 'db.example.com', port: 1, data: '' } })`,
          `new TcpCheck('family', { name: 'T', request: { hostname: 'db.example.com', port: 1, ipFamily: 'IPv5' } })`,
          `new TcpCheck('source', { name: 'T', request: { hostname: 'db.example.com', port: 1, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '1' }] } })`,
          `new TcpCheck('cmp', { name: 'T', request: { hostname: 'db.example.com', port: 1, assertions: [{ source: 'RESPONSE_DATA', comparison: 'HAS_KEY', target: 'a' }] } })`,
          `new TcpCheck('time', { name: 'T', request: { hostname: 'db.example.com', port: 1, assertions: [{ source: 'RESPONSE_TIME', comparison: 'CONTAINS', target: '1' }, { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: 'fast' }] } })`,
          `new TcpCheck('regex', { name: 'T', request: { hostname: 'db.example.com', port: 1, assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'a', regex: '(' }] } })`,
          `new TcpCheck('offset', { name: 'T', request: { hostname: 'db.example.com', port: 1 }, frequency: 0 })`,
          `new TcpCheck('offset2', { name: 'T', request: { hostname: 'db.example.com', port: 1 }, frequency: 0, frequencyOffset: 15 })`,
          `new TcpCheck('max', { name: 'T', request: { hostname: 'db.example.com', port: 1 }, maxResponseTime: 50000 })`,
        ].join('\n'),
      ),
    ).toEqual([
      'a.check.ts › TcpCheck "url" › request.hostname: must be a host name or an IP address, not a URL (got "tcp://db.example.com"); the port goes in request.port',
      'a.check.ts › TcpCheck "hostport" › request.hostname: must be a host name or an IP address without a port (got "db.example.com:5432"); the port goes in request.port',
      'a.check.ts › TcpCheck "noport" › request.port: is required',
      'a.check.ts › TcpCheck "port" › request.port: must be at most 65535 (got 70000)',
      'a.check.ts › TcpCheck "data" › request.data: must be at least 1 character long',
      'a.check.ts › TcpCheck "family" › request.ipFamily: must be one of IPv4, IPv6 (got "IPv5")',
      'a.check.ts › TcpCheck "source" › request.assertions.0.source: must be one of RESPONSE_DATA, RESPONSE_TIME (got "STATUS_CODE")',
      'a.check.ts › TcpCheck "cmp" › request.assertions.0.comparison: must be one of EQUALS, NOT_EQUALS, IS_EMPTY, NOT_EMPTY, LESS_THAN, GREATER_THAN, CONTAINS, NOT_CONTAINS (got "HAS_KEY")',
      'a.check.ts › TcpCheck "time" › request.assertions.0.comparison: must be one of EQUALS, NOT_EQUALS, LESS_THAN, GREATER_THAN when source is RESPONSE_TIME (got "CONTAINS")',
      'a.check.ts › TcpCheck "time" › request.assertions.1.target: must be a number of milliseconds when source is RESPONSE_TIME (got "fast")',
      expect.stringMatching(/^a\.check\.ts › TcpCheck "regex" › request\.assertions\.0\.regex: is not a valid regular expression: /),
      'a.check.ts › TcpCheck "offset" › frequencyOffset: is required when frequency is 0: 10, 20 or 30 (seconds between runs)',
      'a.check.ts › TcpCheck "offset2" › frequencyOffset: must be 10, 20 or 30 when frequency is 0 (got 15)',
      'a.check.ts › TcpCheck "max" › maxResponseTime: must be at most 45000 (got 50000)',
    ])
  })
})
