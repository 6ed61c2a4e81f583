import { RUNTIME_IDS, type RuntimeId } from './enums.js'

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
    name: '2025.04', multiStepSupport: true, nodeJsVersion: 'v22.11.0', stage: 'CURRENT', runtimeEndOfLife: '2027-04-30',
    description: 'Node.js 22, Playwright 1.51, axios 1.8 and a refreshed set of helpers; Authorization headers scrubbed from traces.',
    dependencies: { '@playwright/test': '1.51.1', playwright: '1.51.1', axios: '1.8.4', chai: '4.5.0', 'date-fns': '4.1.0', jsonwebtoken: '9.0.2', lodash: '4.17.21', uuid: '11.1.0' },
  },
  {
    name: '2024.09', multiStepSupport: true, nodeJsVersion: 'v20.17.0', stage: 'STABLE', runtimeEndOfLife: '2026-09-30',
    description: 'Node.js 20, Playwright 1.47 and axios 1.7.',
    dependencies: { '@playwright/test': '1.47.2', playwright: '1.47.2', axios: '1.7.7', chai: '4.5.0', 'date-fns': '3.6.0', jsonwebtoken: '9.0.2', lodash: '4.17.21', uuid: '10.0.0' },
  },
  {
    name: '2024.02', multiStepSupport: true, nodeJsVersion: 'v18.19.1', stage: 'DEPRECATED', runtimeEndOfLife: '2026-02-28',
    description: 'Node.js 18, Playwright 1.41 and multi-step checks.',
    dependencies: { '@playwright/test': '1.41.2', playwright: '1.41.2', axios: '1.6.7', chai: '4.4.1', 'date-fns': '3.3.1', jsonwebtoken: '9.0.2', lodash: '4.17.21', uuid: '9.0.1' },
  },
  {
    name: '2023.09', multiStepSupport: true, nodeJsVersion: 'v18.17.1', stage: 'DEPRECATED', runtimeEndOfLife: '2025-09-30',
    description: 'Node.js 18 and Playwright 1.38.',
    dependencies: { '@playwright/test': '1.38.1', playwright: '1.38.1', axios: '1.5.0', chai: '4.3.8', 'date-fns': '2.30.0', jsonwebtoken: '9.0.2', lodash: '4.17.21', uuid: '9.0.1' },
  },
  {
    name: '2023.02', multiStepSupport: false, nodeJsVersion: 'v16.19.1', stage: 'REMOVED', runtimeEndOfLife: '2025-02-28',
    description: 'Node.js 16 and Playwright 1.30.',
    dependencies: { '@playwright/test': '1.30.0', playwright: '1.30.0', axios: '1.3.4', chai: '4.3.7', 'date-fns': '2.29.3', jsonwebtoken: '9.0.0', lodash: '4.17.21', uuid: '9.0.0' },
  },
  {
    name: '2022.10', multiStepSupport: false, nodeJsVersion: 'v16.17.1', stage: 'REMOVED', runtimeEndOfLife: '2024-10-31',
    description: 'Node.js 16 and Playwright 1.27.',
    dependencies: { '@playwright/test': '1.27.1', playwright: '1.27.1', axios: '1.1.3', chai: '4.3.6', 'date-fns': '2.29.3', jsonwebtoken: '8.5.1', lodash: '4.17.21', uuid: '9.0.0' },
  },
]

if (RUNTIMES.length !== RUNTIME_IDS.length) throw new Error('RUNTIMES must list every runtime id')
