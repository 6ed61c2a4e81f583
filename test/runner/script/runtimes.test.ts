import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { prepareRuntime, RuntimePrepareError, runtimeState, runtimeStates } from '../../../src/runner/script/index.js'
import { subLock } from '../../../src/runner/script/runtimes.js'
import { classifyImport, findRuntime, importProblem, RUNTIME_IDS, RUNTIMES, runtimePackages } from '../../../src/schema/index.js'
import { prepareTestRuntime, TEST_RUNTIME_CACHE } from '../../helpers/runtime.js'

const repo = resolve(import.meta.dirname, '../../..')
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string; dev?: boolean }> }

describe('runtimes', () => {
  it('declare every runtime id of the spec with its packages, newest first', () => {
    expect(RUNTIMES.map((r) => r.name)).toEqual([...RUNTIME_IDS])
    for (const r of RUNTIMES) {
      expect(Object.keys(r.dependencies)).toContain('@playwright/test')
      for (const v of Object.values(r.dependencies)) expect(v).toMatch(/^\d+\.\d+\.\d+$/)
    }
    expect(RUNTIMES[0]).toMatchObject({ name: '2025.04', stage: 'CURRENT' })
  })

  it("the newest runtime is the project's own: each of its packages is in package-lock.json at the declared version", () => {
    for (const [name, version] of Object.entries(RUNTIMES[0].dependencies))
      expect(`${name}@${lock.packages[`node_modules/${name}`]?.version}`).toBe(`${name}@${version}`)
    // and its Playwright is the one the project drives Chromium with
    expect(RUNTIMES[0].dependencies['@playwright/test']).toBe(lock.packages['node_modules/playwright-core'].version)
  })

  it('say which imports a script may make', () => {
    const r = findRuntime('2025.04')!
    expect(runtimePackages(r)).toContain('playwright-core')
    expect(classifyImport('node:fs')).toEqual({ builtin: 'fs' })
    expect(classifyImport('@playwright/test/reporter')).toEqual({ package: '@playwright/test' })
    expect(classifyImport('lodash/fp')).toEqual({ package: 'lodash' })
    expect(classifyImport('./x')).toEqual({ local: './x' })
    expect(importProblem(r, 'lodash/fp')).toBeNull()
    expect(importProblem(r, 'fs/promises')).toBeNull()
    expect(importProblem(r, 'left-pad')).toMatch(/^imports "left-pad", a package runtime 2025.04 does not provide/)
  })

  it("are prepared from npm's cache without the network; a runtime not prepared says so", async () => {
    const cache = await prepareTestRuntime()
    expect(runtimeState('2025.04', cache)).toMatchObject({ prepared: true, missing: null })
    const req = createRequire(join(cache, '2025.04', 'package.json'))
    for (const [name, version] of Object.entries(RUNTIMES[0].dependencies)) expect(req(`${name}/package.json`).version).toBe(version)
    const empty = mkdtempSync(join(tmpdir(), 'monitors-runtimes-'))
    try {
      expect(runtimeStates(empty).map((s) => [s.id, s.prepared])).toEqual(RUNTIME_IDS.map((id) => [id, false]))
      expect(runtimeState('2024.09', empty).missing).toBe(
        `runtime 2024.09 is not prepared here: its packages are not in ${join(empty, '2024.09')}; prepare it with: monitors runtimes prepare 2024.09 --cache-dir ${empty}`,
      )
      // a lock without the runtime's versions cannot prepare it offline, and says which package
      await expect(prepareRuntime('2024.09', { cacheDir: empty, offline: true, fromLock: join(repo, 'package-lock.json') })).rejects.toThrow(
        new RuntimePrepareError(
          `runtime 2024.09 needs @playwright/test@1.47.2, which ${join(repo, 'package-lock.json')} does not hold (it has 1.65.1): prepare it from the registry`,
        ),
      )
      expect(runtimeState('2024.09', empty).prepared).toBe(false)
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
    expect(TEST_RUNTIME_CACHE).toBe(cache)
  }, 180_000)

  it('are prepared once when two processes ask at the same time: the second waits and finds it prepared', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'monitors-runtimes-'))
    try {
      // an npm that notes each install it runs
      const npm = join(cache, 'npm.sh')
      writeFileSync(npm, `#!/bin/sh\n[ "$1" = ci ] && echo ci >> ${join(cache, 'installs')}\nexec npm "$@"\n`)
      chmodSync(npm, 0o755)
      const prepare = () => prepareRuntime('2025.04', { cacheDir: cache, offline: true, fromLock: join(repo, 'package-lock.json'), npm })
      const [a, b] = await Promise.all([prepare(), prepare()])
      expect([a.prepared, b.prepared]).toEqual([true, true])
      expect(readFileSync(join(cache, 'installs'), 'utf8')).toBe('ci\n')
      expect(readdirSync(cache).sort()).toEqual(['2025.04', 'installs', 'npm.sh'])
    } finally {
      rmSync(cache, { recursive: true, force: true })
    }
  }, 300_000)

  it('take from a lock exactly the packages a runtime needs, none of them marked dev', () => {
    const sub = subLock(join(repo, 'package-lock.json'), RUNTIMES[0], 'rt', 'http://registry.invalid/') as { packages: Record<string, Record<string, unknown>> }
    expect(sub.packages['']).toEqual({ name: 'rt', dependencies: RUNTIMES[0].dependencies })
    expect(Object.keys(sub.packages)).toContain('node_modules/playwright-core')
    expect(Object.keys(sub.packages)).not.toContain('node_modules/vitest')
    for (const [k, v] of Object.entries(sub.packages)) {
      if (!k) continue
      expect(v.dev).toBeUndefined()
      expect(String(v.resolved)).toMatch(/^http:\/\/registry\.invalid\/.+\/-\/.+\.tgz$/)
    }
  })
})
