/**
 * `sslCheckDomain`'s rule, checked while the project loads (before any request): a domain name,
 * without scheme, path or port, reported as file › construct › field: message.
 */
import { describe, expect, it } from 'vitest'
import { loadProject, ProjectError } from '../../src/project/index.js'
import { tempProject } from './helpers.js'

async function load(check: string) {
  const dir = tempProject({
    'monitoring.config.ts': `export default { projectName: 'p' }\n`,
    'a.check.ts': `// @ts-nocheck\nimport { IcmpCheck, TcpCheck, DnsCheck, UrlCheck } from 'monitors-as-code'\n${check}\n`,
  })
  return loadProject({ cwd: dir }).then(
    (project) => ({ project, problems: [] as string[] }),
    (error: unknown) => {
      expect(error).toBeInstanceOf(ProjectError)
      return { project: undefined, problems: (error as ProjectError).message.split('\n').slice(0, -1) }
    },
  )
}

describe('sslCheckDomain rules', () => {
  it('a domain name loads on ICMP, TCP, DNS and URL checks', async () => {
    const { project, problems } = await load(
      [
        `new IcmpCheck('ping', { name: 'P', request: { hostname: 'edge.example.com' }, sslCheckDomain: 'shop.example.com' })`,
        `new TcpCheck('tcp', { name: 'T', request: { hostname: 'db.example.com', port: 5432 }, sslCheckDomain: 'db.example.com.' })`,
        `new DnsCheck('dns', { name: 'D', request: { query: 'example.com', recordType: 'A' }, sslCheckDomain: 'www.example.com' })`,
        `new UrlCheck('url', { name: 'U', request: { url: 'https://example.com/' }, sslCheckDomain: 'cdn.example.com' })`,
      ].join('\n'),
    )
    expect(problems).toEqual([])
    expect(project!.resources.map((r) => (r.payload as { sslCheckDomain?: string }).sslCheckDomain).sort()).toEqual([
      'cdn.example.com',
      'db.example.com.',
      'shop.example.com',
      'www.example.com',
    ])
  })

  it('a scheme, a path, a port or something that is not a name is reported before any request', async () => {
    const { problems } = await load(
      [
        `new IcmpCheck('scheme', { name: 'P', request: { hostname: 'edge.example.com' }, sslCheckDomain: 'https://shop.example.com' })`,
        `new IcmpCheck('path', { name: 'P', request: { hostname: 'edge.example.com' }, sslCheckDomain: 'shop.example.com/health' })`,
        `new TcpCheck('port', { name: 'T', request: { hostname: 'db.example.com', port: 5432 }, sslCheckDomain: 'shop.example.com:8443' })`,
        `new TcpCheck('ip', { name: 'T', request: { hostname: 'db.example.com', port: 5432 }, sslCheckDomain: '10.0.0.5' })`,
        `new DnsCheck('space', { name: 'D', request: { query: 'example.com', recordType: 'A' }, sslCheckDomain: 'shop example.com' })`,
        `new UrlCheck('empty', { name: 'U', request: { url: 'https://example.com/' }, sslCheckDomain: '' })`,
      ].join('\n'),
    )
    const allowed = 'must be a domain name such as example.com (no scheme, path or port)'
    expect(problems).toEqual([
      `a.check.ts › IcmpCheck "scheme" › sslCheckDomain: ${allowed}: remove the scheme (got "https://shop.example.com")`,
      `a.check.ts › IcmpCheck "path" › sslCheckDomain: ${allowed}: remove the path (got "shop.example.com/health")`,
      `a.check.ts › TcpCheck "port" › sslCheckDomain: ${allowed}: remove the port; the certificate is read on port 443 (got "shop.example.com:8443")`,
      `a.check.ts › TcpCheck "ip" › sslCheckDomain: ${allowed} (got "10.0.0.5")`,
      `a.check.ts › DnsCheck "space" › sslCheckDomain: ${allowed} (got "shop example.com")`,
      `a.check.ts › UrlCheck "empty" › sslCheckDomain: ${allowed} (got "")`,
    ])
  })
})
