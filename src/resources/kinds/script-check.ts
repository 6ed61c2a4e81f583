import { browserCheckSchema, multiStepCheckSchema } from '../../schema/script-check.js'
import { playwrightCheckSchema } from '../../schema/playwright-check.js'
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
export const playwrightCheck = {
  kind: 'playwright-check',
  construct: 'PlaywrightCheck',
  example: "new PlaywrightCheck('shop-suite', { name: 'Shop suite', playwrightConfigPath: './playwright.config.ts' })",
  schema: playwrightCheckSchema,
  ...checkDescriptor('playwright', 'PLAYWRIGHT', { setArrays: ['pwProjects', 'pwTags'], keyedArrays: { files: 'path' }, unorderedKeyed: ['files'] }),
  filledByConstruct: {},
} satisfies ResourceDescriptor
