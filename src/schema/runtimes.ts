import { builtinModules } from 'node:module'
import { RUNTIME_IDS, type RuntimeId } from './enums.js'

/**
 * The runtimes scripts run on (browser and multi-step checks, Playwright check suites): each
 * declares the npm packages and versions it gives a script. This declaration is the one source:
 * the runtimes listing (`GET /v1/runtimes`) answers from it, the bundler checks a script's
 * imports against it, and a server or agent prepares a runtime by installing exactly these
 * packages (src/runner/script/runtimes.ts). See docs/scripts.md.
 */

/** A runtime record (field names settled in API.md). */
export interface Runtime {
  name: RuntimeId
  multiStepSupport: boolean
  nodeJsVersion: string
  dependencies: Record<string, string>
  stage: 'ALPHA' | 'BETA' | 'CURRENT' | 'DEPRECATED' | 'REMOVED' | 'STABLE'
  runtimeEndOfLife: string
  description: string
}

/** The six runtimes the API knows (spec: Versioning), newest first. */
export const RUNTIMES: readonly Runtime[] = [
  {
    name: '2025.04',
    multiStepSupport: true,
    nodeJsVersion: 'v22.11.0',
    stage: 'CURRENT',
    runtimeEndOfLife: '2027-04-30',
    description:
      'Playwright 1.65 with Chromium, axios 1.21, chai 6, date-fns 4, jsonwebtoken 9, lodash 4 and uuid 14; Authorization headers scrubbed from traces.',
    dependencies: {
      '@playwright/test': '1.65.1',
      playwright: '1.65.1',
      axios: '1.21.1',
      chai: '6.3.0',
      'date-fns': '4.4.0',
      jsonwebtoken: '9.0.3',
      lodash: '4.18.1',
      uuid: '14.0.3',
    },
  },
  {
    name: '2024.09',
    multiStepSupport: true,
    nodeJsVersion: 'v20.17.0',
    stage: 'STABLE',
    runtimeEndOfLife: '2026-09-30',
    description: 'Node.js 20, Playwright 1.47 and axios 1.7.',
    dependencies: {
      '@playwright/test': '1.47.2',
      playwright: '1.47.2',
      axios: '1.7.7',
      chai: '4.5.0',
      'date-fns': '3.6.0',
      jsonwebtoken: '9.0.2',
      lodash: '4.17.21',
      uuid: '10.0.0',
    },
  },
  {
    name: '2024.02',
    multiStepSupport: true,
    nodeJsVersion: 'v18.19.1',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '2026-02-28',
    description: 'Node.js 18, Playwright 1.41 and multi-step checks.',
    dependencies: {
      '@playwright/test': '1.41.2',
      playwright: '1.41.2',
      axios: '1.6.7',
      chai: '4.4.1',
      'date-fns': '3.3.1',
      jsonwebtoken: '9.0.2',
      lodash: '4.17.21',
      uuid: '9.0.1',
    },
  },
  {
    name: '2023.09',
    multiStepSupport: true,
    nodeJsVersion: 'v18.17.1',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '2025-09-30',
    description: 'Node.js 18 and Playwright 1.38.',
    dependencies: {
      '@playwright/test': '1.38.1',
      playwright: '1.38.1',
      axios: '1.5.0',
      chai: '4.3.8',
      'date-fns': '2.30.0',
      jsonwebtoken: '9.0.2',
      lodash: '4.17.21',
      uuid: '9.0.1',
    },
  },
  {
    name: '2023.02',
    multiStepSupport: false,
    nodeJsVersion: 'v16.19.1',
    stage: 'REMOVED',
    runtimeEndOfLife: '2025-02-28',
    description: 'Node.js 16 and Playwright 1.30.',
    dependencies: {
      '@playwright/test': '1.30.0',
      playwright: '1.30.0',
      axios: '1.3.4',
      chai: '4.3.7',
      'date-fns': '2.29.3',
      jsonwebtoken: '9.0.0',
      lodash: '4.17.21',
      uuid: '9.0.0',
    },
  },
  {
    name: '2022.10',
    multiStepSupport: false,
    nodeJsVersion: 'v16.17.1',
    stage: 'REMOVED',
    runtimeEndOfLife: '2024-10-31',
    description: 'Node.js 16 and Playwright 1.27.',
    dependencies: {
      '@playwright/test': '1.27.1',
      playwright: '1.27.1',
      axios: '1.1.3',
      chai: '4.3.6',
      'date-fns': '2.29.3',
      jsonwebtoken: '8.5.1',
      lodash: '4.17.21',
      uuid: '9.0.0',
    },
  },
]

if (RUNTIMES.length !== RUNTIME_IDS.length) throw new Error('RUNTIMES must list every runtime id')

/** The runtime a check without `runtimeId` runs on: the newest one. */
export const DEFAULT_RUNTIME_ID: RuntimeId = RUNTIMES[0].name

export function findRuntime(id: string | null | undefined): Runtime | undefined {
  return RUNTIMES.find((r) => r.name === (id ?? DEFAULT_RUNTIME_ID))
}

/**
 * What a script's import names: `node:fs` and `fs` → `{ builtin: 'fs' }`; `@scope/pkg/sub` →
 * `{ package: '@scope/pkg' }`; `lodash/fp` → `{ package: 'lodash' }`; a relative or absolute
 * path → `{ local }`.
 */
export type ImportKind = { builtin: string } | { package: string } | { local: string }

const BUILTINS = new Set(builtinModules)

export function classifyImport(specifier: string): ImportKind {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return { local: specifier }
  if (specifier.startsWith('node:')) return { builtin: specifier.slice(5) }
  const parts = specifier.split('/')
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
  if (BUILTINS.has(name) || BUILTINS.has(specifier)) return { builtin: specifier }
  return { package: name }
}

/**
 * The packages a runtime gives scripts: those it declares, and `playwright-core` and
 * `@playwright/test`'s own `playwright`, which come with its Playwright.
 */
export function runtimePackages(runtime: Runtime): string[] {
  const names = new Set(Object.keys(runtime.dependencies))
  if (names.has('@playwright/test') || names.has('playwright')) names.add('playwright-core')
  return [...names].sort()
}

/** The runtime's Playwright version, from its `@playwright/test` or `playwright` package. */
export function runtimePlaywrightVersion(runtime: Runtime): string | undefined {
  return runtime.dependencies['@playwright/test'] ?? runtime.dependencies.playwright
}

/**
 * Why a script cannot import `specifier` on `runtime` (null when it can): a Node built-in, or a
 * package the runtime declares.
 */
export function importProblem(runtime: Runtime, specifier: string): string | null {
  const kind = classifyImport(specifier)
  if (!('package' in kind)) return null
  if (runtimePackages(runtime).includes(kind.package)) return null
  return `imports "${specifier}", a package runtime ${runtime.name} does not provide (it provides ${runtimePackages(runtime).join(', ')})`
}
