import { browserCheckSchema, multiStepCheckSchema } from '../../schema/script-check.js'
import { playwrightCheckSchema, suiteTestCommand } from '../../schema/playwright-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/**
 * What browser and multi-step checks share: the script's local files (`dependencies`) are
 * diffed by path, so a plan names each file that changed (src/plan/render shows the lines).
 */
const scriptCheckParts = { keyedArrays: { dependencies: 'path' }, unorderedKeyed: ['dependencies'] } as const

/** A browser check (`BrowserCheck`): a Playwright script run in Chromium. */
export const browserCheck = {
  kind: 'browser-check',
  construct: 'BrowserCheck',
  example: "new BrowserCheck('shop-home', { name: 'Shop home', code: { entrypoint: './home.spec.ts' } })",
  schema: browserCheckSchema,
  ...checkDescriptor('browser', 'BROWSER', scriptCheckParts),
  filledByConstruct: {},
} satisfies ResourceDescriptor

/** A multi-step check (`MultiStepCheck`): a Playwright script of API requests, without a browser. */
export const multiStepCheck = {
  kind: 'multistep-check',
  construct: 'MultiStepCheck',
  example: "new MultiStepCheck('orders-api', { name: 'Orders API', code: { entrypoint: './orders.spec.ts' } })",
  schema: multiStepCheckSchema,
  ...checkDescriptor('multistep', 'MULTI_STEP', scriptCheckParts),
  filledByConstruct: {},
} satisfies ResourceDescriptor

/**
 * A Playwright check suite (`PlaywrightCheck`): a whole Playwright project; its `files` are
 * diffed by path (a plan shows the lines of each file that changed); `testCommand` is the
 * service's answer, derived from the selection (never compared).
 */
const suiteParts = checkDescriptor('playwright', 'PLAYWRIGHT', {
  setArrays: ['pwProjects', 'pwTags'],
  keyedArrays: { files: 'path' },
  unorderedKeyed: ['files'],
})

/** Playwright's own default: a suite naming no config runs the `playwright.config.ts` at its root. */
const DEFAULT_CONFIG = 'playwright.config.ts'

/**
 * A suite that names no config but holds `playwright.config.ts` at its root runs that config
 * (Playwright's default), so it compares as the same suite naming it: a suite made through the
 * API without `playwrightConfigPath`, imported as code (which names its config), plans No changes.
 */
function defaultConfigNamed(suite: Record<string, unknown>): Record<string, unknown> {
  if (suite.playwrightConfigPath != null || !Array.isArray(suite.files)) return suite
  if (!(suite.files as Array<{ path?: unknown }>).some((f) => f !== null && typeof f === 'object' && f.path === DEFAULT_CONFIG)) return suite
  const named: Record<string, unknown> = { ...suite, playwrightConfigPath: DEFAULT_CONFIG }
  if ('testCommand' in suite) named.testCommand = suiteTestCommand(named as Parameters<typeof suiteTestCommand>[0])
  return named
}

export const playwrightCheck = {
  kind: 'playwright-check',
  construct: 'PlaywrightCheck',
  example: "new PlaywrightCheck('shop-suite', { name: 'Shop suite', playwrightConfigPath: './playwright.config.ts' })",
  schema: playwrightCheckSchema,
  ...suiteParts,
  normalize: (suite: Record<string, unknown>) => suiteParts.normalize(defaultConfigNamed(suite)),
  normalizeNeeded: (suite: Record<string, unknown>) => defaultConfigNamed(suite) !== suite || suiteParts.normalizeNeeded(suite),
  filledByConstruct: {},
} satisfies ResourceDescriptor
