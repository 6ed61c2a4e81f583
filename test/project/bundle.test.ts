import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bundleScript, type ScriptSourceInput } from '../../src/project/bundle.js'
import { formatProblem } from '../../src/project/errors.js'

let dir: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-bundle-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function write(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
}

const input = (extra: Partial<ScriptSourceInput>): ScriptSourceInput => ({
  checkFile: 'checks/login.check.ts',
  projectDir: '.',
  cwd: dir,
  construct: 'BrowserCheck',
  logicalId: 'login',
  ...extra,
})

describe('bundling a script', () => {
  it('gives the API the entry as script, its path, and every local file it imports as dependencies', async () => {
    write({
      'checks/login.spec.ts': `import { test, expect } from '@playwright/test'\nimport { user } from './lib/user'\nimport { readFileSync } from 'node:fs'\nimport _ from 'lodash'\ntest('login', async ({ page }) => { await page.goto(user.url); expect(_.isString(user.name)).toBe(true); readFileSync })\n`,
      'checks/lib/user.ts': `import data from '../../shared/data.json'\nexport const user = { name: data.name, url: 'http://127.0.0.1/' }\n`,
      'shared/data.json': '{ "name": "ada" }\n',
      'checks/unrelated.ts': 'export const x = 1\n',
    })
    const out = await bundleScript(input({ entrypoint: './login.spec.ts' }))
    expect(out.ok).toBe(true)
    if (!out.ok) return
    expect(out.value.scriptPath).toBe('checks/login.spec.ts')
    expect(out.value.script).toContain("import { user } from './lib/user'")
    expect(out.value.dependencies).toEqual([
      { path: 'checks/lib/user.ts', content: expect.stringContaining('export const user') },
      { path: 'shared/data.json', content: '{ "name": "ada" }\n' },
    ])
    expect(out.value.files.map((f) => f.path)).toEqual(['checks/login.spec.ts', 'checks/lib/user.ts', 'shared/data.json'])
  })

  it('names the check file, the construct and the field when the entrypoint is missing', async () => {
    const out = await bundleScript(input({ entrypoint: './nope.spec.ts' }))
    expect(out.ok).toBe(false)
    if (out.ok) return
    expect(out.problems.map(formatProblem)).toEqual([
      'checks/login.check.ts › BrowserCheck "login" › code.entrypoint: file ./nope.spec.ts does not exist (looked for checks/nope.spec.ts)',
    ])
  })

  it('names the importing file, its line and the import for a missing file and for a package the runtime does not provide', async () => {
    write({
      'checks/login.spec.ts': `import { test } from '@playwright/test'\nimport { helper } from './lib/helper'\ntest('login', async () => { helper() })\n`,
      'checks/lib/helper.ts': `import { gone } from './gone'\n\nimport pad from 'left-pad'\nexport const helper = () => pad(gone, 2)\n`,
    })
    const out = await bundleScript(input({ entrypoint: './login.spec.ts' }))
    expect(out.ok).toBe(false)
    if (out.ok) return
    expect(out.problems.map(formatProblem)).toEqual([
      'checks/lib/helper.ts:1 › BrowserCheck "login" › imports "./gone", which does not exist',
      'checks/lib/helper.ts:3 › BrowserCheck "login" › imports "left-pad", a package runtime 2025.04 does not provide (it provides @playwright/test, axios, chai, date-fns, jsonwebtoken, lodash, playwright, playwright-core, uuid)',
    ])
  })

  it("checks packages against the check's own runtime", async () => {
    write({ 'checks/login.spec.ts': `import { test } from '@playwright/test'\nimport x from 'left-pad'\ntest('login', async () => { x })\n` })
    const out = await bundleScript(input({ entrypoint: './login.spec.ts', runtimeId: '2024.09' }))
    expect(out.ok ? [] : out.problems.map((p) => p.message)).toEqual([expect.stringContaining('a package runtime 2024.09 does not provide')])
  })

  it('refuses a file outside the project, and local imports from inline content', async () => {
    write({
      'project/checks/login.spec.ts': `import { test } from '@playwright/test'\nimport { x } from '../../outside'\ntest('login', async () => { x })\n`,
      'outside.ts': 'export const x = 1\n',
    })
    const out = await bundleScript(input({ entrypoint: './login.spec.ts', checkFile: 'project/checks/login.check.ts', projectDir: 'project' }))
    expect(out.ok ? [] : out.problems.map(formatProblem)).toEqual([
      'project/checks/login.spec.ts:2 › BrowserCheck "login" › imports "../../outside", which is outside the project folder (outside.ts)',
    ])
    const inline = await bundleScript(input({ content: `import { test } from '@playwright/test'\nimport { x } from './x'\ntest('a', async () => { x })` }))
    expect(inline.ok ? [] : inline.problems.map((p) => p.message)).toEqual([
      `imports "./x": inline content cannot import the project's files; put the script in a file and give it as entrypoint`,
    ])
    const ok = await bundleScript(input({ content: `import { test } from '@playwright/test'\ntest('a', async () => {})` }))
    expect(ok.ok && ok.value).toMatchObject({ scriptPath: null, dependencies: [] })
  })

  it('reports a syntax error with its place', async () => {
    write({ 'checks/login.spec.ts': `import { test } from '@playwright/test'\ntest('login', async () => {\n  const = 1\n})\n` })
    const out = await bundleScript(input({ entrypoint: './login.spec.ts' }))
    expect(out.ok ? [] : out.problems.map(formatProblem)).toEqual(['checks/login.spec.ts:3:9 › BrowserCheck "login" › Expected identifier but found "="'])
  })
})
