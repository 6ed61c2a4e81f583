import type { PlaywrightCheckInput } from '../src/schema/playwright-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

export interface PlaywrightCheckProps extends CheckProps {
  /**
   * The Playwright config of the suite, relative to this file. Its folder is the suite's root:
   * the config, the test files it finds (`testDir`, `testMatch`, `testIgnore`, the selected
   * projects' own) and the local files they import are sent as the check's `files`.
   * @example playwrightConfigPath: './playwright.config.ts'
   */
  playwrightConfigPath: string
  /**
   * Globs of more files to send, relative to the config's folder (data files the tests read).
   * @example include: ['fixtures/**']
   */
  include?: string | string[]
  /**
   * The config's projects to run (`--project`); default every project.
   * @example pwProjects: ['chromium']
   */
  pwProjects?: string[]
  /**
   * Tags of the tests to run (`--grep`, any of them); default every test.
   * @example pwTags: ['@smoke']
   */
  pwTags?: string[]
  /**
   * Variables the tests read from `process.env`, at most 50; a `secret` one is scrubbed from
   * everything a run keeps (logs, traces, errors).
   * @example environmentVariables: [{ key: 'SHOP_PASSWORD', value: 'hunter2', secret: true }]
   */
  environmentVariables?: PlaywrightCheckInput['environmentVariables']
  /**
   * Up to 500 characters describing the check.
   * @example description: 'Smoke tests of the shop'
   */
  description?: string | null
}

/**
 * A Playwright check suite: a whole Playwright project (its config, test files, selected
 * projects and tags) run by the runtime's `playwright test` in Chromium from each location; a
 * failed run keeps its screenshots and traces.
 *
 * @example
 * new PlaywrightCheck('shop-suite', {
 *   name: 'Shop suite',
 *   frequency: 10,
 *   playwrightConfigPath: './playwright.config.ts',
 *   pwProjects: ['chromium'],
 *   pwTags: ['@smoke'],
 * })
 */
export class PlaywrightCheck extends Construct<PlaywrightCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among Playwright checks: letters, digits and `_ - / # .`
   * @param props the check's API fields, and its project (`playwrightConfigPath`, `include`)
   */
  constructor(logicalId: string, props: PlaywrightCheckProps) {
    super('playwright-check', 'PlaywrightCheck', logicalId, props)
  }
}
