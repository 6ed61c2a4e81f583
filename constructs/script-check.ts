import type { BrowserCheckInput } from '../src/schema/script-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

/**
 * The script of a browser or multi-step check: a Playwright test file (`entrypoint`) or the
 * script inline (`content`), one of the two.
 */
export interface ScriptCodeProps {
  /**
   * The test file, relative to the check file: it and the local files it imports are bundled
   * when the project loads (`script`, `scriptPath` and `dependencies` of the API).
   * @example entrypoint: './login.spec.ts'
   */
  entrypoint?: string
  /**
   * The script inline; it may import the runtime's packages, not the project's files.
   * @example content: "import { test, expect } from '@playwright/test'\ntest('home', async ({ page }) => { await page.goto('https://shop.example.com') })"
   */
  content?: string
}

export interface ScriptCheckProps extends CheckProps {
  /**
   * The Playwright test script (`import { test, expect } from '@playwright/test'`).
   * @example code: { entrypoint: './login.spec.ts' }
   */
  code: ScriptCodeProps
  /**
   * Variables the script reads from `process.env`, at most 50; a `secret` one is scrubbed from
   * everything a run keeps (logs, traces, errors).
   * @example environmentVariables: [{ key: 'SHOP_PASSWORD', value: 'hunter2', secret: true }]
   */
  environmentVariables?: BrowserCheckInput['environmentVariables']
  /**
   * Up to 510 characters describing the check.
   * @example description: 'Logs in and opens the orders page'
   */
  description?: string | null
}

export interface BrowserCheckProps extends ScriptCheckProps {
  /**
   * A domain whose certificate each run reads (its days left become the run's).
   * @example sslCheckDomain: 'shop.example.com'
   */
  sslCheckDomain?: string | null
}

export type MultiStepCheckProps = ScriptCheckProps

/**
 * A browser check: a Playwright test script run in Chromium from each location; a failed run
 * keeps its screenshots and trace.
 *
 * @example
 * new BrowserCheck('shop-login', {
 *   name: 'Shop login',
 *   frequency: 10,
 *   code: { entrypoint: './login.spec.ts' },
 * })
 */
export class BrowserCheck extends Construct<BrowserCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among browser checks: letters, digits and `_ - / # .`
   * @param props the check's API fields, and its `code`
   */
  constructor(logicalId: string, props: BrowserCheckProps) {
    super('browser-check', 'BrowserCheck', logicalId, props)
  }
}

/**
 * A multi-step check: a Playwright test script of API requests (its `request` fixture),
 * without a browser.
 *
 * @example
 * new MultiStepCheck('orders-flow', {
 *   name: 'Orders flow',
 *   code: { entrypoint: './orders.spec.ts' },
 * })
 */
export class MultiStepCheck extends Construct<MultiStepCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among multi-step checks: letters, digits and `_ - / # .`
   * @param props the check's API fields, and its `code`
   */
  constructor(logicalId: string, props: MultiStepCheckProps) {
    super('multistep-check', 'MultiStepCheck', logicalId, props)
  }
}
