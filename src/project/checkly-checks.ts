/**
 * The checks a `checkly.config.ts` declares outside check files, made as the hosted CLI makes
 * them once the check files have loaded: a browser check of each spec file
 * `checks.browserChecks.testMatch` matches (a multi-step check of each `multiStepChecks.testMatch`
 * matches), unless a check file's check already runs it: logical id the file's path in the
 * project, name its file name; and the Playwright suites of `checks.playwrightChecks` (or the one
 * of `checks.playwrightConfigPath`).
 */
import path from 'node:path'
import { BrowserCheck, MultiStepCheck, PlaywrightCheck } from '../../constructs/checkly/constructs.js'
import type { ChecklySettings } from './checkly-config.js'
import { findFiles } from './glob.js'
import type { LoadingSession } from './loader.js'

/** The spec files of both testMatch settings, relative to the project, for the "no files" check. */
export function specFilesOf(checkly: ChecklySettings, rootDir: string, ignore: string[]): { browser: string[]; multiStep: string[] } {
  return {
    browser: checkly.browserTestMatch.length > 0 ? findFiles(rootDir, checkly.browserTestMatch, ignore) : [],
    multiStep: checkly.multiStepTestMatch.length > 0 ? findFiles(rootDir, checkly.multiStepTestMatch, ignore) : [],
  }
}

/** The files the project's browser and multi-step checks run already (their `code.entrypoint`), absolute. */
function entrypoints(session: LoadingSession): Set<string> {
  const out = new Set<string>()
  for (const r of session.registrations) {
    if (r.construct.__monitorsKind !== 'browser-check' && r.construct.__monitorsKind !== 'multistep-check') continue
    const code = (r.construct.props as { code?: { entrypoint?: unknown } }).code
    if (typeof code?.entrypoint === 'string') out.add(path.resolve(path.dirname(r.file), code.entrypoint))
  }
  return out
}

/** Runs `make` as the top-level code of `file`: the construct it makes belongs to that file. */
function madeIn(session: LoadingSession, file: string, make: () => void): void {
  const [current, running] = [session.current, session.running]
  session.current = file
  session.running = file
  try {
    make()
  } finally {
    session.current = current
    session.running = running
  }
}

/** Makes the checks the config declares outside check files (see the module's comment). */
export function makeChecklyChecks(
  session: LoadingSession,
  checkly: ChecklySettings,
  rootDir: string,
  configFile: string,
  specs: { browser: string[]; multiStep: string[] },
): void {
  for (const [files, Make] of [
    [specs.browser, BrowserCheck],
    [specs.multiStep, MultiStepCheck],
  ] as const) {
    const taken = entrypoints(session)
    for (const rel of files) {
      const file = path.join(rootDir, rel)
      if (taken.has(file)) continue
      madeIn(session, file, () => new Make(rel, { name: path.basename(file), code: { entrypoint: `./${path.basename(file)}` } }))
    }
  }
  const suites = checkly.playwrightChecks
  const shared = { ...(checkly.include !== undefined ? { include: checkly.include } : {}) }
  madeIn(session, configFile, () => {
    for (const suite of suites) {
      const { logicalId, ...props } = suite
      new PlaywrightCheck(String(logicalId), {
        ...shared,
        ...props,
        playwrightConfigPath: (props.playwrightConfigPath as string | undefined) ?? checkly.playwrightConfigPath,
      } as never)
    }
    if (suites.length === 0 && checkly.playwrightConfigPath !== undefined) {
      const name = path.basename(checkly.playwrightConfigPath)
      new PlaywrightCheck(name, { ...shared, name, playwrightConfigPath: checkly.playwrightConfigPath })
    }
  })
}
