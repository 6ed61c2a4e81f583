import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { staleBuildProblem } from '../setup/fresh-build.js'

function tree(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), 'monitors-fresh-'))
  for (const [file, seconds] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), '')
    utimesSync(join(root, file), seconds, seconds)
  }
  return root
}

describe('the guard against testing a stale dist/', () => {
  it('accepts a bundle newer than every source', () => {
    expect(staleBuildProblem(tree({ 'src/a.ts': 1000, 'constructs/b.ts': 1000, 'dist/cli/main.js': 2000 }))).toBeUndefined()
  })

  it('refuses a source under src/ edited after the build, naming it and npm run build', () => {
    const problem = staleBuildProblem(tree({ 'src/cli/deep/a.ts': 3000, 'constructs/b.ts': 1000, 'dist/cli/main.js': 2000 }))
    expect(problem).toContain('src/cli/deep/a.ts')
    expect(problem).toContain('npm run build')
  })

  it('refuses a construct edited after the build', () => {
    expect(staleBuildProblem(tree({ 'src/a.ts': 1000, 'constructs/b.ts': 3000, 'dist/cli/main.js': 2000 }))).toContain('constructs/b.ts')
  })

  it('refuses a missing build', () => {
    expect(staleBuildProblem(tree({ 'src/a.ts': 1000 }))).toMatch(/dist\/cli\/main\.js is missing: run `npm run build`/)
  })
})
