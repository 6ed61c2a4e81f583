import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import pc from 'picocolors'
import { planAgainst, renderPlanText, hasChanges, type Plan } from '../../plan/index.js'
import { assertNoDuplicates, assertNotBlocked, assertUnprotected, driftOnly } from '../../plan/select.js'
import { formatProblem, ProjectError, type LoadedProject, type Problem } from '../../project/index.js'
import { planFromMemo } from '../plan-memo.js'
import { redact } from '../../api/redact.js'
import {
  data,
  engineOptions,
  environmentRequest,
  err,
  printSecretWarnings,
  warnEmptySecrets,
  formatOption,
  phaseTimer,
  loadOrReport,
  openSession,
  out,
  setStdoutFormat,
  useColor,
  type EngineArgs,
  type OutputFormat,
} from '../engine.js'

interface PlanArgs extends EngineArgs {
  detailedExitcode?: boolean
  out?: string
  refreshOnly?: boolean
  adoptExisting?: boolean
  allowDuplicates?: boolean
  verbose?: boolean
}

/** Extras of a plan document: the project's lints, and why the plan is refused. */
export interface PlanDocumentExtras {
  warnings?: readonly Problem[]
  /** The plan must not run (protected or blocked deletes, duplicates): the reason, and the document says ok: false. */
  refused?: string
  /** Every field of a create, schema defaults too (text and markdown). */
  verbose?: boolean
}

/** The plan in the chosen format: text to `out` (stdout), markdown and JSON to stdout as documents. */
export async function printPlan(plan: Plan, format: OutputFormat | undefined, noChanges?: string, extras: PlanDocumentExtras = {}): Promise<void> {
  const warnings = extras.warnings ?? []
  if (format === 'json') {
    const { planToJson } = await import('../../plan/render/json.js')
    const doc = {
      ...planToJson(plan),
      blocked: plan.blocked ?? [],
      ok: extras.refused === undefined,
      ...(extras.refused !== undefined ? { refused: redact(extras.refused) } : {}),
      warnings,
    }
    data(`${JSON.stringify(doc, null, 2)}\n`)
  } else if (format === 'markdown') {
    const { renderPlanMarkdown } = await import('../../plan/render/markdown.js')
    let text = renderPlanMarkdown(plan, { verbose: extras.verbose ?? false })
    if (extras.refused !== undefined) {
      text += `**This plan is refused; nothing will be applied.**\n\n${extras.refused
        .split('\n')
        .map((l) => `> ${escapeMarkdown(redact(l.trim()))}`)
        .join('\n')}\n\n`
    }
    text += markdownWarnings(warnings)
    data(text)
  } else {
    out(renderPlanText(plan, { color: useColor(), verbose: extras.verbose ?? false, ...(noChanges ? { noChanges } : {}) }))
  }
}

const escapeMarkdown = (t: string) =>
  t
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]#|])/g, '\\$1')

function markdownWarnings(warnings: readonly Problem[]): string {
  if (warnings.length === 0) return ''
  return `**${warnings.length} warning${warnings.length === 1 ? '' : 's'}:**\n\n${warnings.map((w) => `- ${escapeMarkdown(formatProblem(w))}`).join('\n')}\n\n`
}

/**
 * Runs the refusals of a plan (protected or blocked deletes, duplicates); when one refuses, the
 * plan is printed first (a reader sees what would have happened, in text as in a document,
 * where the refusal is written too), then the refusal is thrown.
 */
export async function printUnlessRefused(plan: Plan, format: OutputFormat | undefined, checks: () => void, extras: PlanDocumentExtras = {}): Promise<void> {
  try {
    checks()
  } catch (error) {
    if (!(error instanceof Error)) throw error
    await printPlan(plan, format, undefined, { ...extras, refused: error.message })
    throw error
  }
}

/** Lints on stderr, one a line: they never fail a command. */
export function printWarnings(warnings: readonly Problem[] | undefined): void {
  if (!warnings || warnings.length === 0) return
  const c = pc.createColors(useColor())
  err(`${warnings.map((w) => `${c.yellow('⚠')} ${formatProblem(w)}`).join('\n')}\n`)
}

/**
 * The document `plan --format json|markdown` writes when there is no plan: the project does not
 * load or validate, or the target or the API fails. A pull-request comment is then replaced
 * with the problems instead of keeping a stale plan.
 */
export function printErrorDocument(
  format: OutputFormat | undefined,
  problems: readonly Problem[],
  warnings: readonly Problem[] = [],
  environment?: string,
): void {
  const shown = problems.map((p) => ({ ...p, message: redact(p.message) }))
  if (format === 'json') {
    data(
      `${JSON.stringify({ formatVersion: 1, ...(environment !== undefined ? { environment } : {}), ok: false, hasChanges: false, problems: shown, warnings }, null, 2)}\n`,
    )
  } else if (format === 'markdown') {
    const cell = (t: string) =>
      t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '&#124;').replace(/`/g, '&#96;').replace(/\r?\n/g, '<br>')
    const rows = shown.map(
      (p) =>
        `| ${cell(p.file + (p.line ? `:${p.line}` : ''))} | ${cell(p.construct ? `${p.construct}${p.logicalId !== undefined ? ` ${p.logicalId}` : ''}` : '')} | ${cell(p.field ?? '')} | ${cell(p.message)} |`,
    )
    const title = `monitors plan${environment !== undefined ? `: ${environment}` : ''}`
    data(
      `### ${escapeMarkdown(title)}\n\n**No plan: ${shown.length} problem${shown.length === 1 ? '' : 's'}**; nothing was sent.\n\n| File | Construct | Field | Problem |\n|---|---|---|---|\n${rows.join('\n')}\n\n${markdownWarnings(warnings)}`,
    )
  }
}

/** An error as a problem of the error document: no file, its message. */
const problemOf = (error: unknown): Problem => ({ file: '', message: error instanceof Error ? error.message : String(error) })

/** Loads the project; for a document format, problems are also returned to be written as one. */
async function loadForPlan(args: PlanArgs, load: () => Promise<LoadedProject>): Promise<{ project?: LoadedProject; problems?: Problem[] }> {
  if (args.format !== 'json' && args.format !== 'markdown') return { project: await loadOrReport(args, { load }) }
  try {
    const project = await load()
    warnEmptySecrets(project.resources)
    return { project }
  } catch (error) {
    if (!(error instanceof ProjectError)) return { problems: [problemOf(error)] }
    const lines = error.message.split('\n')
    const count = lines.pop()
    const c = pc.createColors(useColor())
    err(`${lines.map((l) => `${c.red('✖')} ${l}`).join('\n')}\n${c.red(count ?? '')}\n`)
    return { problems: error.problems }
  }
}

/** The lock file's text as it is on disk (for a saved plan's fingerprint); undefined when absent. */
export function readLockText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * A plan as `monitors plan` shows it: only drift with `--refresh-only`, else refused (shown,
 * then thrown) as apply refuses it: when it deletes what is protected or blocked, or creates
 * what exists already (duplicates); the exit code of a shown plan.
 * `written` is called once the document is written.
 */
async function showPlan(planned: Plan, args: PlanArgs, warnings: readonly Problem[], written: () => void): Promise<number> {
  let plan = planned
  let refusal: Error | undefined
  if (args.refreshOnly) {
    plan = driftOnly(plan)
    delete plan.blocked
  } else {
    try {
      assertUnprotected(plan)
      assertNotBlocked(plan)
      // what apply refuses is no plan of changes: exit 1 (never 2 with --detailed-exitcode)
      assertNoDuplicates(plan, { allowDuplicates: args.allowDuplicates })
    } catch (error) {
      refusal = error as Error
    }
  }
  if (refusal) {
    // the plan is shown, then why it is refused (protected, blocked): in text on stderr, in a document inside it
    await printPlan(plan, args.format, undefined, { warnings, refused: refusal.message, verbose: args.verbose })
    written()
    throw refusal
  }
  await printPlan(plan, args.format, args.refreshOnly ? 'Nothing was changed outside monitors since the last apply.' : undefined, {
    warnings,
    verbose: args.verbose,
  })
  written()
  return args.detailedExitcode && hasChanges(plan) ? 2 : 0
}

/**
 * `monitors plan`: what apply would do. Loads and validates the project (nothing is sent while
 * it has problems), reads the remote state from the list endpoints and prints the plan.
 */
export const planCommand = {
  command: 'plan',
  describe: 'Show what apply would create, update and delete, without changing anything',
  builder: (yargs: Argv) =>
    formatOption(engineOptions(yargs))
      .option('detailed-exitcode', {
        type: 'boolean',
        default: false,
        describe: 'Exit 2 when the plan has changes, 0 when it has none, 1 on errors',
      })
      .option('out', { type: 'string', describe: 'Save the plan to this file; "monitors apply <file>" then runs exactly it, or refuses it as stale' })
      .option('refresh-only', { type: 'boolean', default: false, describe: 'Show only drift: what was changed outside monitors since the last apply' })
      .option('verbose', { type: 'boolean', default: false, describe: 'Show every field of a create, defaults too (the JSON document always has them)' })
      .option('adopt-existing', {
        type: 'boolean',
        default: false,
        describe: 'Plan a create of what already exists remotely, unmanaged, with the same name (key, url) as recording the existing resource and updating it',
      })
      .option('allow-duplicates', {
        type: 'boolean',
        default: false,
        describe: 'Plan such creates as second copies, as apply --allow-duplicates makes them (never possible for a variable key or a status page url)',
      }),
  handler: async (args: ArgumentsCamelCase<PlanArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    const timing = phaseTimer()
    const memo = await planFromMemo(args, (phase) => timing(`memo: ${phase}`))
    if ('plan' in memo) {
      timing('memo')
      printSecretWarnings(memo.printed.secretWarnings)
      printWarnings(memo.printed.warnings)
      try {
        return await showPlan(memo.plan, args, memo.printed.warnings, () => {})
      } finally {
        await memo.session.close()
      }
    }
    let loaded: Awaited<ReturnType<typeof loadForPlan>>
    try {
      loaded = await loadForPlan(args, memo.load)
    } catch (error) {
      await memo.session?.close()
      throw error
    }
    timing('load')
    const project = loaded.project
    if (!project) {
      await memo.session?.close()
      // the environment as asked for: the document of a failed plan still says which one it is
      if (loaded.problems) printErrorDocument(args.format, loaded.problems, [], environmentRequest(args)?.name || undefined)
      return 1
    }
    printWarnings(project.warnings)
    // with --format json|markdown a document is written whatever fails: never an empty stdout
    let written = false
    try {
      const session = memo.session ?? (await openSession(project, args))
      session.project = project
      timing('target')
      try {
        const lockText = args.out ? readLockText(session.open.lockPath) : undefined
        const { plan, remote } = await planAgainst({
          client: session.open.client,
          desired: project.resources,
          lock: session.lock,
          target: session.open.target,
          environment: session.open.environment,
          adoptExisting: args.adoptExisting,
          targets: args.target,
        })
        memo.remember?.(plan, project)
        timing('plan')
        const code = await showPlan(plan, args, project.warnings, () => (written = true))
        timing('render')
        if (args.out) {
          const { fingerprint, makeSavedPlan, writeSavedPlan } = await import('../../plan/saved.js')
          const prints = fingerprint({ desired: project.resources, lock: session.lock, lockText, remote })
          writeSavedPlan(resolve(args.out), makeSavedPlan(plan, prints))
          err(`Saved the plan to ${args.out}; run it with: monitors apply ${args.out}\n`)
        }
        return code
      } finally {
        await session.close()
        timing('close')
      }
    } catch (error) {
      if (!written) printErrorDocument(args.format, [problemOf(error)], project.warnings, project.config.environment?.name)
      throw error
    }
  },
} as unknown as CommandModule<object, PlanArgs>
