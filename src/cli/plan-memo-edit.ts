import type { DeferredProject, FileKey, Problem } from '../project/index.js'
import { keptRemoteState } from '../api/resources.js'
import { replanChanged, type Plan } from '../plan/index.js'
import { splitHashes, type PlanMemo } from '../plan/memo.js'
import { CONSTRUCT_NAMES, RESOURCE_KINDS } from '../resources/registry.js'
import type { ResourceKind } from '../resources/types.js'
import { lockEntriesOf, lockKey } from '../state/lock.js'
import type { Session } from './engine.js'
import type { MemoArgs, MemoPrinted } from './plan-memo.js'

/**
 * The plan of a project of which only some check files changed since the kept plan (`edited`:
 * their path relative to the project root, gone ones too), made from the kept one: the
 * constructs of those files that the kept plan did not see (by a hash of their construct cache
 * key) validated, the records of their resources alone read from the page cache (every list page has just answered 304: the remote state is the kept plan's), their
 * changes planned again (replanChanged, which checks what a change depends on beyond its own
 * resource), and the lints of those files in place of the kept ones. A miss (with why) when that
 * could differ from the plan made from scratch: the edited files do not hold the same resources
 * as before (added, removed, moved into a file not edited), a construct has a problem, the
 * project has a maintenance window (whose lint reads every check's tags), or a record is not kept.
 */
export function replanEdited(
  deferred: DeferredProject,
  memo: PlanMemo,
  edited: ReadonlySet<string>,
  parts: { files: ReadonlyMap<string, FileKey>; hashesOf: (file: string) => string[] },
  session: Session,
  args: MemoArgs,
  timing: (phase: string) => void,
  /** The lock's bytes, when they are in the form monitors writes (PlanMemo.lockWritten): the entries needed are read alone. */
  lockBytes?: Buffer,
): { plan: Plan; printed: MemoPrinted; lockRead: 'entries' | 'whole' } | { miss: string } {
  const now: string[] = []
  // of the edited files' constructs, those whose key the kept plan did not see (the others' changes stand)
  const changedKeys = new Set<string>()
  for (const [name, file] of parts.files) {
    if (file.resources.some((key) => key.startsWith('maintenance-window:'))) return { miss: 'a maintenance window lints every check' }
    if (!edited.has(name)) continue
    now.push(...file.resources)
    const seen = new Set(splitHashes(memo.constructs[name]))
    parts.hashesOf(name).forEach((hash, i) => {
      if (!seen.has(hash)) changedKeys.add(file.resources[i])
    })
  }
  const before = memo.plan.changes
    .filter((c) => c.action !== 'delete' && c.action !== 'forget' && c.file !== undefined && edited.has(c.file))
    .map((c) => lockKey(c.kind, c.logicalId))
  if (!sameKeys(now, before)) return { miss: 'they hold other resources than before' }
  const validated = deferred.validateFiles(edited, changedKeys)
  if (validated.problems.length > 0) return { miss: 'a construct has a problem' }
  timing('edited files validated')
  const entries =
    lockBytes &&
    lockEntriesOf(
      lockBytes,
      validated.resources.map((r) => lockKey(r.kind, r.logicalId)),
    )
  const lock = entries || session.lock
  const wanted: Array<{ kind: ResourceKind; remoteId: string }> = []
  for (const resource of validated.resources) {
    const entry = lock?.resources[lockKey(resource.kind, resource.logicalId)]
    if (!entry) return { miss: 'a resource of theirs is not in the lock' }
    wanted.push({ kind: resource.kind, remoteId: entry.remoteId })
  }
  const remote = keptRemoteState(session.open.client, memo.pages, wanted)
  if (!remote) return { miss: 'the page cache does not hold their records' }
  timing('their records read')
  const plan = replanChanged(memo.plan, validated.resources, {
    desired: validated.resources,
    lock,
    remote,
    target: session.open.target,
    environment: session.open.environment,
    adoptExisting: args.adoptExisting === true,
    allowDuplicates: args.allowDuplicates === true,
  })
  if (!plan) return { miss: 'a change of theirs depends on other resources' }
  const printed = memo.printed as MemoPrinted
  const changed = new Set(validated.resources.map((r) => `${r.construct}\0${r.logicalId}`))
  const warnings = inResourceOrder([...printed.warnings.filter((w) => !changed.has(`${w.construct}\0${w.logicalId}`)), ...validated.warnings])
  return { plan, printed: { secretWarnings: printed.secretWarnings, warnings }, lockRead: entries ? 'entries' : 'whole' }
}

/** Whether two lists hold the same keys as many times each. */
function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  const x = [...a].sort()
  const y = [...b].sort()
  return x.every((key, i) => key === y[i])
}

const KIND_OF_CONSTRUCT = new Map<string, number>(RESOURCE_KINDS.map((kind, i) => [CONSTRUCT_NAMES[kind], i]))

/** Lints as lintResources gives them: by the resources' order (kind, then logical id), each resource's in their order. */
function inResourceOrder(warnings: Problem[]): Problem[] {
  const rank = (w: Problem) => KIND_OF_CONSTRUCT.get(w.construct ?? '') ?? RESOURCE_KINDS.length
  return warnings.sort((a, b) => rank(a) - rank(b) || ((a.logicalId ?? '') < (b.logicalId ?? '') ? -1 : (a.logicalId ?? '') > (b.logicalId ?? '') ? 1 : 0))
}
