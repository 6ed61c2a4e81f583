import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, sep } from 'node:path'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import type { ResourceKind } from '../../resources/types.js'
import { CHECK_KINDS, descriptorOf, displayName, referenceSites, referredKinds, RESOURCE_KINDS } from '../../resources/registry.js'
import { chooseOutFile } from '../../import/out-file.js'
import { fetchRemoteState, type RemoteState } from '../../api/resources.js'
import { lockKey, writeLock, type LockEntry } from '../../state/lock.js'
import { appliedHash, secretHashOf } from '../../resources/hashes.js'
import { normalize } from '../../resources/normalize.js'
import { suiteFileBytes } from '../../schema/playwright-check.js'
import type { CodeConstruct, ImportedSecret } from '../../import/codegen.js'
import type { LoadedProject } from '../../project/index.js'
import { environmentRequest, err, engineOptions, out, workingLock, type EngineArgs, type Session, withApplySession } from '../engine.js'
import type { LockFile } from '../../state/lock.js'
import type { PlanChange } from '../../plan/types.js'
import { UserError } from '../../errors.js'
import { io } from '../io.js'

interface ImportArgs extends EngineArgs {
  resources?: string[]
  all?: boolean
  out?: string
  adopt?: boolean
  lockTimeout?: string
}

class ImportError extends UserError {}

interface Candidate {
  kind: ResourceKind
  remoteId: string
  logicalId: string
  name: string
  record: Record<string, unknown>
}

/** Remote resources the lock does not know, each with a logical id free in the code and the lock. */
function unmanaged(remote: RemoteState, known: Set<string>): Candidate[] {
  const out: Candidate[] = []
  for (const kind of RESOURCE_KINDS) {
    for (const [remoteId, record] of Object.entries(remote.records[kind])) {
      if (known.has(lockKey(kind, remoteId))) continue
      const name = displayName(kind, record) ?? remoteId
      out.push({ kind, remoteId, logicalId: '', name, record })
    }
  }
  return out
}

/**
 * `monitors import`: lists remote resources the lock does not know; with `--all` or
 * `kind:id` arguments writes constructs for them into a check file and records them in the
 * lock, so that the next plan says `No changes.`. With `--adopt`: constructs that have no lock
 * entry take over the remote resource of the same kind and name instead of creating another.
 */
export const importCommand = {
  command: 'import [resources..]',
  describe: 'List remote resources the lock does not know; write constructs for them (--all, or kind:id...), or adopt them (--adopt)',
  builder: (yargs: Argv) =>
    engineOptions(yargs)
      .positional('resources', {
        type: 'string',
        array: true,
        describe: 'kind:id of the resources to import (id: the remote id, or the logical id the list suggests)',
      })
      .option('all', { type: 'boolean', default: false, describe: 'Import every remote resource the lock does not know' })
      .option('out', {
        type: 'string',
        describe:
          'New check file to write the constructs into; it must be one checkMatch matches (default: imported.check.ts in the place checkMatch names, e.g. checks/imported.check.ts)',
      })
      .option('adopt', {
        type: 'boolean',
        default: false,
        describe: 'Record remote resources of the same kind and name as constructs that have no lock entry, instead of creating duplicates',
      })
      .option('lock-timeout', { type: 'string', default: '0', describe: 'How long to wait for an apply in this checkout to finish' }),
  handler: async (args: ArgumentsCamelCase<ImportArgs>): Promise<number> => {
    // a project with a config and no check file yet: import writes its first one
    return withApplySession(
      args,
      'monitors import',
      async (project, session) => {
        const remote = await fetchRemoteState(session.open.client, RESOURCE_KINDS)
        const lock = workingLock(session)
        const known = new Set(Object.values(lock.resources).map((e) => lockKey(e.kind, e.remoteId)))
        const candidates = unmanaged(remote, known)

        if (args.adopt) return adopt(candidates, project.resources, lock, session.open.lockPath)

        // the written file must be one the project loads, or the next plan deletes what is recorded
        const writing = args.all || (args.resources ?? []).length > 0
        const target = writing
          ? chooseOutFile({ ...project.config, rootDir: project.rootDir, configFile: project.configFile }, args.out, process.cwd())
          : undefined
        if (target && 'problem' in target) throw new ImportError(target.problem)

        // logical ids: from the name, unique per kind among the code, the lock and each other
        const taken = new Set<string>([...project.resources.map((r) => lockKey(r.kind, r.logicalId)), ...Object.keys(lock.resources)])
        const { slug } = await import('../../import/codegen.js')
        for (const c of candidates) {
          const base = descriptorOf(c.kind).logicalIdField ? c.remoteId : slug(c.name)
          let id = base
          for (let i = 2; taken.has(lockKey(c.kind, id)); i++) id = `${base}-${i}`
          taken.add(lockKey(c.kind, id))
          c.logicalId = id
        }

        const wanted = args.resources ?? []
        if (!args.all && wanted.length === 0) {
          if (candidates.length === 0) {
            out('Every remote resource is in the lock: nothing to import.\n')
            return 0
          }
          out(`${candidates.length} remote resource${candidates.length === 1 ? '' : 's'} not in the lock:\n`)
          for (const c of candidates) out(`  ${c.kind}:${c.logicalId}  "${c.name}"  (id ${c.remoteId})\n`)
          out('Import them with: monitors import --all (or monitors import <kind:id>...) [--out <check file>]\n')
          return 0
        }

        const { chosen, code } = chooseImports(args, candidates, { lock, project })
        if (chosen.length === 0) {
          out('Every remote resource is in the lock: nothing to import.\n')
          return 0
        }

        const file = (target as { file: string }).file
        const { generateImport } = await import('../../import/codegen.js')
        const defaults = (project.config.defaults ?? {}) as Record<string, unknown>
        const checkFileDir = relative(project.rootDir, dirname(file)).split(sep).join('/')
        const { text, secrets, files } = generateImport(chosen, defaults, undefined, { checkFileDir }, code)
        // the scripts of browser and multi-step checks, the projects of Playwright checks: never over a different file
        const clashes = files.filter((f) => existsSync(join(project.rootDir, f.path)) && !readFileSync(join(project.rootDir, f.path)).equals(suiteFileBytes(f)))
        if (clashes.length > 0) {
          throw new ImportError(
            `${clashes.map((f) => f.path).join(', ')} already ${clashes.length === 1 ? 'exists' : 'exist'} with other content: the imported scripts would replace ${clashes.length === 1 ? 'it' : 'them'}. Move ${clashes.length === 1 ? 'it' : 'them'} away, then import again.`,
          )
        }
        mkdirSync(dirname(file), { recursive: true })
        writeFileSync(file, text, { flag: 'wx' })
        for (const f of files) {
          mkdirSync(dirname(join(project.rootDir, f.path)), { recursive: true })
          writeFileSync(join(project.rootDir, f.path), suiteFileBytes(f))
        }
        const env = io().env
        for (const c of chosen) {
          const entry: LockEntry = { kind: c.kind, logicalId: c.logicalId, remoteId: c.remoteId, appliedHash: appliedHash(c.kind, c.record), name: c.name }
          const secretHash = importedSecretHash(c, secrets, env)
          if (secretHash) entry.secretHash = secretHash
          lock.resources[lockKey(c.kind, c.logicalId)] = entry
        }
        writeLock(session.open.lockPath, lock)
        const shown = relative(process.cwd(), file) || file
        for (const c of chosen) out(`+ ${c.kind} ${c.logicalId} imported (id ${c.remoteId})\n`)
        out(`Wrote ${chosen.length} construct${chosen.length === 1 ? '' : 's'} to ${shown} and recorded them in the lock.\n`)
        if (files.length > 0)
          out(
            `Wrote the scripts of its browser, multi-step and Playwright checks: ${files.map((f) => relative(process.cwd(), join(project.rootDir, f.path))).join(', ')}.\n`,
          )
        // what the next plan does with them, from that plan itself: the note promises nothing else
        const next = await nextPlanOf(args, session, lock, remote, new Set(chosen.map((c) => lockKey(c.kind, c.logicalId))))
        if (secrets.length > 0 || 'problems' in next || next.changes.length > 0) err(secretsNote(secrets, env, next))
        return 0
      },
      { allowNoCheckFiles: true },
    )
  },
} as unknown as CommandModule<object, ImportArgs>

/** What the next plan (with the environment as it is now) does with the imported resources: its changes, or the problems that stop it. */
type NextPlan = { changes: PlanChange[] } | { problems: string[] }

async function nextPlanOf(args: ImportArgs, session: Session, lock: LockFile, remote: RemoteState, imported: ReadonlySet<string>): Promise<NextPlan> {
  const { loadProject, ProjectError, formatProblem } = await import('../../project/index.js')
  const { computePlan } = await import('../../plan/plan.js')
  let project
  try {
    project = await loadProject({ config: args.config, environment: environmentRequest(args), cache: args.cache })
  } catch (error) {
    if (error instanceof ProjectError) return { problems: error.problems.map(formatProblem) }
    throw error
  }
  const plan = computePlan({ desired: project.resources, lock, remote, target: session.open.target, environment: session.open.environment })
  return { changes: plan.changes.filter((c) => c.action !== 'noop' && imported.has(lockKey(c.kind, c.logicalId))) }
}

/** One change of the next plan as the summary names it: `~ variable TOKEN › value (secret changed)`. */
function changeLine(change: PlanChange): string {
  const sign = change.action === 'create' ? '+' : change.action === 'delete' ? '-' : change.action === 'replace' ? '-/+' : '~'
  const fields = (change.fieldDiffs ?? []).map((d) => (d.secret && typeof d.new === 'string' ? `${d.path} ${d.new}` : d.path))
  return `  ${sign} ${change.kind} ${change.logicalId}${fields.length > 0 ? ` › ${fields.join(', ')}` : ''}`
}

/** The check ids a remote check depends on (`dependsOn`). */
const dependsOnIds = (record: Record<string, unknown>): string[] =>
  Array.isArray(record.dependsOn) ? record.dependsOn.filter((id): id is string => typeof id === 'string') : []

/** What the imported code may refer to besides what it imports: the lock and the code, with what each check file exports. */
interface InCode {
  lock: ReturnType<typeof workingLock>
  project: Pick<LoadedProject, 'resources' | 'exported'>
  /** the lock's entries by `kind:remoteId`, made at the first question */
  byRemoteId?: Map<string, LockEntry>
}

/**
 * The remote resources an import writes, and the constructs in code they refer to: all, or those
 * named (kind:id); with every resource they refer to that the lock does not know (the services of
 * a page or of a check's triggerIncident, a check's group, alert channels, snippets and the checks
 * it depends on). A reference to a resource already in code is to its construct, imported from the
 * check file that exports it; the imported code never holds an id of the service it was read from,
 * which another environment does not have (or has for something else). One that cannot be a
 * reference (not exported, not in code, not on the service) stops the import, nothing written.
 */
function chooseImports(
  args: ArgumentsCamelCase<ImportArgs>,
  candidates: ReturnType<typeof unmanaged>,
  inCode: InCode,
): { chosen: Candidate[]; code: CodeConstruct[] } {
  const wanted = args.resources ?? []
  const chosen = args.all ? [...candidates] : []
  if (!args.all) {
    const bad: string[] = []
    for (const text of wanted) {
      const at = text.indexOf(':')
      const kind = text.slice(0, at)
      const id = text.slice(at + 1)
      const found = candidates.find((c) => c.kind === kind && (c.remoteId === id || c.logicalId === id))
      if (at <= 0 || !found) bad.push(text)
      else if (!chosen.includes(found)) chosen.push(found)
    }
    if (bad.length > 0) {
      throw new ImportError(
        `${bad.map((b) => JSON.stringify(b)).join(', ')}: not a remote resource missing from the lock. Write kind:id (kind one of ${RESOURCE_KINDS.join(', ')}); run "monitors import" to list them.`,
      )
    }
  }
  const code = new Map<string, CodeConstruct>()
  // what a resource refers to comes along (a construct must refer to a construct), or is named from the code
  const follow = (c: Candidate, kinds: readonly ResourceKind[], id: string, where: string) => {
    const along = candidates.find((s) => kinds.includes(s.kind) && s.remoteId === id)
    if (along) {
      if (!chosen.includes(along)) chosen.push(along)
      return
    }
    if (kinds.some((kind) => code.has(`${kind}:${id}`))) return
    const construct = constructInCode(c, kinds, id, where, inCode)
    code.set(`${construct.kind}:${construct.remoteId}`, construct)
  }
  for (let i = 0; i < chosen.length; i++) {
    const c = chosen[i]
    for (const { value, field } of referenceSites(c.kind, c.record)) {
      // a snippet's, a group's and a channel's ids are numbers; null is no reference
      if (typeof value !== 'string' && typeof value !== 'number') continue
      follow(c, referredKinds(field), String(value), field.where ?? ' on one of its cards')
    }
    for (const id of dependsOnIds(c.record)) follow(c, [...CHECK_KINDS], id, ' in its dependsOn')
  }
  return { chosen, code: [...code.values()] }
}

/**
 * The construct in code a resource being imported refers to (by its id on the service read): the
 * lock's entry of that id, its construct in the code, and the check file exporting it. Throws an
 * ImportError saying what to do when one of them is missing.
 */
function constructInCode(c: Candidate, kinds: readonly ResourceKind[], id: string, where: string, inCode: InCode): CodeConstruct {
  const referrer = `${c.kind} "${c.name}"`
  inCode.byRemoteId ??= new Map(Object.values(inCode.lock.resources).map((e) => [`${e.kind}:${e.remoteId}`, e]))
  const entry = kinds.map((kind) => inCode.byRemoteId!.get(`${kind}:${id}`)).find((e) => e !== undefined)
  const kindShown = kinds.length === 1 ? kinds[0] : kinds.some((k) => CHECK_KINDS.has(k)) ? 'check' : 'alert channel'
  if (!entry) {
    throw new ImportError(
      `${referrer} refers to the ${kindShown} ${id}${where}, which the service does not list and the lock does not know, so the imported code could not refer to it; nothing was imported. Fix that reference on the service (or import the other resources by kind:id), then import again.`,
    )
  }
  const construct = `${descriptorOf(entry.kind).construct} "${entry.logicalId}"`
  const inProject = inCode.project.resources.find((r) => r.kind === entry.kind && r.logicalId === entry.logicalId)
  if (!inProject) {
    throw new ImportError(
      `${referrer} refers to ${construct} (id ${id})${where}, which the lock records but no check file declares any more (the next apply deletes it); nothing was imported. Put that construct back in code and export it, then import again.`,
    )
  }
  const exported = inCode.project.exported.get(lockKey(entry.kind, entry.logicalId))
  if (!exported) {
    throw new ImportError(
      `${referrer} refers to ${construct} (id ${id})${where}, which ${inProject.file} declares without exporting it; nothing was imported. Export it (export const … = new ${descriptorOf(entry.kind).construct}('${entry.logicalId}', …)) so that the imported code can refer to it, then import again.`,
    )
  }
  return { kind: entry.kind, remoteId: id, logicalId: entry.logicalId, file: exported.file, name: exported.name }
}

/**
 * The lock's fingerprint of an imported resource's secrets, from the environment variables its
 * code reads them from: those set now are taken as the values the service holds (the service
 * never returns them), so the next plan with the same variables says "No changes"; undefined
 * when none of them is set (the next plan then shows "(secret changed)", and apply sends them).
 */
function importedSecretHash(c: Candidate, secrets: readonly ImportedSecret[], env: NodeJS.ProcessEnv): string | undefined {
  const own = secrets.filter((s) => s.kind === c.kind && s.logicalId === c.logicalId && env[s.name])
  if (own.length === 0) return undefined
  const payload = structuredClone(normalize(c.kind, c.record))
  const setAt = (steps: readonly string[], value: string) => {
    let node: unknown = payload
    for (const step of steps.slice(0, -1)) node = Array.isArray(node) ? node[Number(step)] : (node as Record<string, unknown>)?.[step]
    if (node && typeof node === 'object') (node as Record<string, unknown>)[steps[steps.length - 1]] = value
  }
  for (const s of secrets.filter((x) => x.kind === c.kind && x.logicalId === c.logicalId)) setAt(s.steps, env[s.name] ?? '')
  return secretHashOf(c.kind, payload)
}

/**
 * Which environment variables the imported code reads secrets from and which are set, then what
 * the next plan does with the imported resources, as that plan says it (`next`): nothing, its
 * changes, or the problems that stop it.
 */
function secretsNote(secrets: readonly ImportedSecret[], env: NodeJS.ProcessEnv, next: NextPlan): string {
  const out: string[] = []
  if (secrets.length > 0) {
    const width = Math.max(...secrets.map((s) => s.name.length))
    out.push(
      `The service never returns secret values: the file reads ${secrets.length === 1 ? 'this one' : `these ${secrets.length}`} from the environment. Set ${secrets.length === 1 ? 'it' : 'each'} to the value the service holds (in this shell and in the pipeline that applies):`,
      ...secrets.map(
        (s) => `  ${s.name.padEnd(width)}  ${s.kind} ${s.logicalId} › ${s.field}${env[s.name] ? "  (set: taken as the service's value)" : '  (not set)'}`,
      ),
    )
  }
  const unset = secrets.some((s) => !env[s.name])
  if ('problems' in next) {
    out.push(
      'With the environment as it is now, the next plan refuses the imported code:',
      ...next.problems.map((p) => `  ✖ ${p}`),
      unset ? 'Nothing is planned until then: set the ones not set to the values the service holds.' : 'Nothing is planned until then: fix the imported file.',
    )
  } else if (next.changes.length > 0) {
    out.push(
      `With the environment as it is now, the next plan changes ${next.changes.length === 1 ? 'this imported resource' : `these ${next.changes.length} imported resources`}, and its apply sends the code's values:`,
      ...next.changes.map(changeLine),
      unset
        ? 'Set the ones not set to the values the service holds before applying: unset, they are sent as "" over the service\'s.'
        : 'Edit the file to match the service, or apply to make the service match it.',
    )
  } else {
    out.push(
      unset
        ? 'The next plan with the environment as it is now says "No changes" for them: an empty secret of a channel or a check is not compared.'
        : 'Their values were recorded (as salted fingerprints) in the lock: the next plan with the same values says "No changes".',
    )
  }
  out.push('')
  return out.join('\n')
}

function adopt(
  candidates: Candidate[],
  desired: ReadonlyArray<{ kind: ResourceKind; logicalId: string; payload: Record<string, unknown> }>,
  lock: ReturnType<typeof workingLock>,
  lockPath: string,
): number {
  let adopted = 0
  const used = new Set<string>()
  for (const resource of desired) {
    const key = lockKey(resource.kind, resource.logicalId)
    if (lock.resources[key]) continue
    const name = displayName(resource.kind, resource.payload)
    const same = candidates.filter((c) => c.kind === resource.kind && c.name === name && !used.has(lockKey(c.kind, c.remoteId)))
    if (same.length === 0) continue
    if (same.length > 1) {
      err(
        `! ${resource.kind} ${resource.logicalId}: ${same.length} remote resources are named "${name}" (ids ${same.map((s) => s.remoteId).join(', ')}); none adopted.\n`,
      )
      continue
    }
    const [match] = same
    used.add(lockKey(match.kind, match.remoteId))
    const entry: LockEntry = {
      kind: resource.kind,
      logicalId: resource.logicalId,
      remoteId: match.remoteId,
      appliedHash: appliedHash(resource.kind, match.record),
      name: match.name,
    }
    lock.resources[key] = entry
    adopted++
    out(`= ${resource.kind} ${resource.logicalId} adopted (id ${match.remoteId})\n`)
  }
  if (adopted === 0) {
    out('Nothing to adopt: every construct without a lock entry has no remote resource of the same kind and name.\n')
    return 0
  }
  writeLock(lockPath, lock)
  out(`Adopted ${adopted} remote resource${adopted === 1 ? '' : 's'} into the lock; run "monitors plan" to see how they differ from the code.\n`)
  // the service does not tell one project's resources from another's: adopting is taking over
  out(
    `The lock did not record ${adopted === 1 ? 'it' : 'them'}: if one belongs to another project, remove its entry from ${basename(lockPath)} before applying, or both projects change it.\n`,
  )
  return 0
}
