/**
 * The hosted service's checks: `ApiCheck`, `BrowserCheck`, `MultiStepCheck`, `PlaywrightCheck`,
 * each this project's construct of the same name with the hosted props mapped.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { HostedConstruct } from './base.js'
import { asList, GUIDE, isObject, loading, upper, type Notes, type Props } from './support.js'
import { translateCheck } from './translate.js'
import type { ApiCheckProps, BrowserCheckProps, MultiStepCheckProps, PlaywrightCheckProps } from './types.js'

const API_METHODS = new Set(['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH'])

function apiRequestOf(request: unknown, notes: Notes): unknown {
  if (!isObject(request)) return request
  const out: Props = { ...request, method: upper(request.method) }
  if (request.url instanceof URL) out.url = request.url.toString()
  if (typeof out.method === 'string' && !API_METHODS.has(out.method)) {
    notes.push({ level: 'problem', field: 'request.method', message: `is ${out.method}: API checks here make GET, POST, PUT, HEAD, DELETE or PATCH requests` })
  }
  return out
}

/** A relative import or require of another file, which a script here cannot carry. */
const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]\.\.?\//

/**
 * An API check's `setupScript` / `tearDownScript` (`{ content }`, or `{ entrypoint }` relative to
 * the check file) as this project's `localSetupScript` / `localTearDownScript` text.
 */
function scriptOf(field: string, given: unknown, notes: Notes): string | undefined {
  if (!isObject(given)) {
    notes.push({ level: 'problem', field, message: "must be { content: '...' } or { entrypoint: './file.ts' }" })
    return undefined
  }
  if (typeof given.content === 'string') return given.content
  if (typeof given.entrypoint !== 'string') {
    notes.push({ level: 'problem', field, message: "must be { content: '...' } or { entrypoint: './file.ts' }" })
    return undefined
  }
  const from = loading()?.current
  const file = path.resolve(from ? path.dirname(from) : process.cwd(), given.entrypoint)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    notes.push({ level: 'problem', field: `${field}.entrypoint`, message: `file ${given.entrypoint} does not exist (looked for ${file})` })
    return undefined
  }
  if (LOCAL_IMPORT.test(text)) {
    notes.push({
      level: 'problem',
      field: `${field}.entrypoint`,
      message: `${given.entrypoint} imports other files of the project, which an API check's script here cannot carry: put the code in one file (Node's modules and the runtime's packages may be imported), or use a Snippet (see ${GUIDE})`,
    })
    return undefined
  }
  return text
}

function apiCheckProps(given: ApiCheckProps): { props: Props; notes: Notes } {
  const { props, notes, rest } = translateCheck('ApiCheck', given as unknown as Props, 'runtime')
  const { request, setupScript, tearDownScript, localSetupScript, localTearDownScript, ...own } = rest
  Object.assign(props, own)
  props.request = apiRequestOf(request, notes)
  const setup = setupScript !== undefined ? scriptOf('setupScript', setupScript, notes) : localSetupScript
  const tearDown = tearDownScript !== undefined ? scriptOf('tearDownScript', tearDownScript, notes) : localTearDownScript
  if (setup !== undefined) props.localSetupScript = setup
  if (tearDown !== undefined) props.localTearDownScript = tearDown
  return { props, notes }
}

/**
 * An API check: an HTTP request from each location, with assertions on the response
 * (`AssertionBuilder.statusCode().equals(200)`).
 */
export class ApiCheck extends HostedConstruct {
  constructor(logicalId: string, props: ApiCheckProps) {
    super('api-check', 'ApiCheck', logicalId, apiCheckProps(props))
  }
}

function playwrightConfigNote(rest: Props, notes: Notes): void {
  if (rest.playwrightConfig !== undefined)
    notes.push({
      level: 'warning',
      field: 'playwrightConfig',
      message: "is not applied here: a script runs with Playwright's defaults; set what it needs in the script (test.use({ ... }))",
    })
  delete rest.playwrightConfig
}

/** A browser or multi-step check's props: what every check shares, its `playwrightConfig` noted, the rest as given. */
function scriptCheckProps(construct: 'BrowserCheck' | 'MultiStepCheck', given: Props, kind: 'browser' | 'multistep'): { props: Props; notes: Notes } {
  const { props, notes, rest } = translateCheck(construct, given, kind)
  playwrightConfigNote(rest, notes)
  Object.assign(props, rest)
  return { props, notes }
}

/** A browser check: a Playwright test script (`code`) run in Chromium. */
export class BrowserCheck extends HostedConstruct {
  constructor(logicalId: string, props: BrowserCheckProps) {
    super('browser-check', 'BrowserCheck', logicalId, scriptCheckProps('BrowserCheck', props as unknown as Props, 'browser'))
  }
}

/** A multi-step check: a Playwright test script of API requests. */
export class MultiStepCheck extends HostedConstruct {
  constructor(logicalId: string, props: MultiStepCheckProps) {
    super('multistep-check', 'MultiStepCheck', logicalId, scriptCheckProps('MultiStepCheck', props as unknown as Props, 'multistep'))
  }
}

function playwrightCheckProps(given: PlaywrightCheckProps): { props: Props; notes: Notes } {
  const { props, notes, rest } = translateCheck('PlaywrightCheck', given as unknown as Props, 'playwright')
  const { pwProjects, pwTags, installCommand, testCommand, engine, groupName, ...own } = rest
  Object.assign(props, own)
  if (pwProjects !== undefined) props.pwProjects = asList(pwProjects)
  if (pwTags !== undefined) props.pwTags = asList(pwTags)
  if (installCommand !== undefined)
    notes.push({
      level: 'warning',
      field: 'installCommand',
      message: "is not run here: a suite runs with its runtime's packages (monitors runtimes, docs/scripts.md)",
    })
  if (testCommand !== undefined)
    notes.push({
      level: 'warning',
      field: 'testCommand',
      message: 'is not run here: a suite runs as npx playwright test with its config, pwProjects and pwTags',
    })
  if (engine !== undefined) notes.push({ level: 'warning', field: 'engine', message: "is not used here: a suite runs on its runtime's Node.js" })
  if (groupName !== undefined)
    notes.push({ level: 'problem', field: 'groupName', message: 'names a group by its name: write group: theGroup, the group construct itself' })
  return { props, notes }
}

/** A Playwright check suite: a whole Playwright project run by `playwright test`. */
export class PlaywrightCheck extends HostedConstruct {
  constructor(logicalId: string, props: PlaywrightCheckProps) {
    super('playwright-check', 'PlaywrightCheck', logicalId, playwrightCheckProps(props))
  }
}
