/**
 * The scripts of browser and multi-step checks, bundled when the project loads: a construct's
 * `code` (`{ entrypoint }` or `{ content }`) becomes the API's `script`, `scriptPath` and
 * `dependencies` (src/project/bundle.ts), before the constructs are validated. A problem (a
 * missing file, an import the runtime does not provide) is a problem of the load, naming the
 * file, the construct and the import. A `PlaywrightCheck`'s project is gathered the same way
 * (src/project/suites.ts): its props' `playwrightConfigPath` and `include` become `files`.
 */
import type { Registration } from './loader.js'
import type { Problem } from './errors.js'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { bundleIntoOne, bundleScript } from './bundle.js'
import { gatherSuite } from './suites.js'
import { descriptorOf, isResourceKind } from '../resources/registry.js'

const SCRIPT_KINDS = new Set<string>(['browser-check', 'multistep-check', 'playwright-check'])

export interface ScriptBundling {
  rootDir: string
  cwd: string
  /** a file as problems name it */
  cwdRel: (abs: string) => string
}

/**
 * Bundles the `code` of every script construct in place (its props get `script`, `scriptPath`
 * and `dependencies` instead); answers the registrations whose script has a problem (each
 * problem added), to be left out of validation.
 */
export async function bundleScripts(registrations: readonly Registration[], at: ScriptBundling, problems: Problem[]): Promise<Set<Registration>> {
  const failed = new Set<Registration>()
  const work = registrations.filter(
    (r) =>
      !r.outside && isResourceKind(r.construct.__monitorsKind) && (SCRIPT_KINDS.has(r.construct.__monitorsKind) || r.construct.__monitorsKind === 'snippet'),
  )
  await Promise.all(
    work.map(async (r) => {
      const c = r.construct
      const props = (c.props ?? {}) as Record<string, unknown>
      const where = { file: at.cwdRel(r.file), construct: descriptorOf(c.__monitorsKind).construct, logicalId: String(c.logicalId) }
      if (c.__monitorsKind === 'snippet') {
        if (!(await bundleSnippetImports(r, props, where, at, problems))) failed.add(r)
        return
      }
      if (c.__monitorsKind === 'playwright-check') {
        if (!(await gatherSuiteProps(r, props, where, at, problems))) failed.add(r)
        return
      }
      const code = props.code
      if (code === undefined && typeof props.script === 'string') return
      if (!code || typeof code !== 'object' || Array.isArray(code)) {
        problems.push({
          ...where,
          field: 'code',
          message: `is required: code: { entrypoint: './login.spec.ts' } (a Playwright test file, relative to this file) or code: { content: '…' } (got ${code === undefined ? 'nothing' : JSON.stringify(code).slice(0, 60)})`,
        })
        failed.add(r)
        return
      }
      const { entrypoint, content, ...extra } = code as Record<string, unknown>
      const unknown = Object.keys(extra)
      if (unknown.length > 0 || (entrypoint !== undefined && typeof entrypoint !== 'string') || (content !== undefined && typeof content !== 'string')) {
        problems.push({
          ...where,
          field: 'code',
          message: `holds entrypoint (a file path) or content (the script), as strings${unknown.length > 0 ? ` (unknown: ${unknown.join(', ')})` : ''}`,
        })
        failed.add(r)
        return
      }
      const outcome = await bundleScript({
        entrypoint: entrypoint as string | undefined,
        content: content as string | undefined,
        checkFile: r.file,
        projectDir: at.rootDir,
        runtimeId: typeof props.runtimeId === 'string' ? props.runtimeId : null,
        construct: where.construct,
        logicalId: where.logicalId,
        cwd: at.cwd,
      })
      if (!outcome.ok) {
        problems.push(...outcome.problems)
        failed.add(r)
        return
      }
      const rest = { ...props }
      delete rest.code
      const bundled: Record<string, unknown> = { ...rest, script: outcome.value.script, scriptPath: outcome.value.scriptPath }
      if (outcome.value.dependencies.length > 0) bundled.dependencies = outcome.value.dependencies
      ;(c as { props: unknown }).props = bundled
    }),
  )
  return failed
}

/** An import or require of a file by a relative path (`./`, `../`). */
const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]\.\.?\//

/**
 * A `Snippet` whose entry file imports the project's files: the entry and those files bundled
 * into one script (a snippet is one `script` in the API), in place of its `code` (as content);
 * false when that has a problem (added). An entry importing no local file is left as it is: its
 * text is the snippet's script (src/project/code-field.ts), which also reports a `code` that is
 * not `{ entrypoint }`.
 */
async function bundleSnippetImports(
  r: Registration,
  props: Record<string, unknown>,
  where: { file: string; construct: string; logicalId: string },
  at: ScriptBundling,
  problems: Problem[],
): Promise<boolean> {
  const code = props.code
  if (!code || typeof code !== 'object' || Array.isArray(code) || Object.keys(code).length !== 1) return true
  const entrypoint = (code as { entrypoint?: unknown }).entrypoint
  if (typeof entrypoint !== 'string' || entrypoint === '') return true
  let text: string
  try {
    text = readFileSync(path.resolve(path.dirname(r.file), entrypoint), 'utf8')
  } catch {
    return true
  }
  if (!LOCAL_IMPORT.test(text)) return true
  const outcome = await bundleIntoOne({
    entrypoint,
    checkFile: r.file,
    projectDir: at.rootDir,
    construct: where.construct,
    logicalId: where.logicalId,
    cwd: at.cwd,
  })
  if (!outcome.ok) {
    problems.push(...outcome.problems)
    return false
  }
  ;(r.construct as { props: unknown }).props = { ...props, code: { content: outcome.script } }
  return true
}

/**
 * A `PlaywrightCheck`'s props with its project gathered (`files`, `playwrightConfigPath` relative
 * to the config's folder, `include` gone), in place; false when it has a problem (added).
 */
async function gatherSuiteProps(
  r: Registration,
  props: Record<string, unknown>,
  where: { file: string; construct: string; logicalId: string },
  at: ScriptBundling,
  problems: Problem[],
): Promise<boolean> {
  const { playwrightConfigPath, include } = props
  if (playwrightConfigPath === undefined && Array.isArray(props.files)) return true
  if (typeof playwrightConfigPath !== 'string' || playwrightConfigPath === '') {
    problems.push({
      ...where,
      field: 'playwrightConfigPath',
      message: `is required: the Playwright config of the suite, relative to this file, e.g. playwrightConfigPath: './playwright.config.ts' (got ${JSON.stringify(playwrightConfigPath) ?? 'nothing'})`,
    })
    return false
  }
  const includes = include === undefined ? [] : Array.isArray(include) ? include : [include]
  if (!includes.every((g): g is string => typeof g === 'string' && g !== '')) {
    problems.push({
      ...where,
      field: 'include',
      message: `holds globs relative to the config's folder, as strings, e.g. include: ['fixtures/**'] (got ${JSON.stringify(include).slice(0, 60)})`,
    })
    return false
  }
  const pwProjects = Array.isArray(props.pwProjects) ? props.pwProjects.filter((p): p is string => typeof p === 'string') : undefined
  const outcome = await gatherSuite({
    checkFile: r.file,
    playwrightConfigPath,
    include: includes,
    pwProjects,
    runtimeId: typeof props.runtimeId === 'string' ? props.runtimeId : null,
    construct: where.construct,
    logicalId: where.logicalId,
    cwd: at.cwd,
  })
  if (!outcome.ok) {
    problems.push(...outcome.problems)
    return false
  }
  const gathered: Record<string, unknown> = { ...props, playwrightConfigPath: outcome.configPath, files: outcome.files }
  delete gathered.include
  ;(r.construct as { props: unknown }).props = gathered
  return true
}
