/**
 * Transpiled check files are kept in the project's node_modules/.cache/monitors-as-code/<version>/
 * (never committed), reused while a file's content is the same, and redone when it changes.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeProject, monitors, repo } from '../helpers/cli.js'

const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version as string
const check = (props: string) => `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('cached-dns', { name: 'Cached DNS', request: { query: 'a.example.com' }${props} })\n`

describe('compile cache', () => {
  it("keeps transpiled check files under node_modules/.cache/monitors-as-code/<version>, keyed by content", async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const first = await monitors(dir, ['validate'])
    expect(first.code, first.output).toBe(0)
    const cache = join(dir, 'node_modules', '.cache', 'monitors-as-code', version)
    expect(existsSync(cache)).toBe(true)
    expect(readdirSync(cache).some((name) => name.includes('shop.check'))).toBe(true)

    // the same file name with other content: the cached output is not reused
    writeFileSync(join(dir, 'shop.check.ts'), check(', frequncy: 5'))
    const second = await monitors(dir, ['validate'])
    expect(second.code).toBe(1)
    expect(second.output).toContain('frequncy: is not a known field (did you mean frequency?)')
  })
})
