import { descriptorOf, isResourceKind, kindOfConstruct, RESOURCE_KINDS, UNIQUE_IDENTITY_KINDS } from '../resources/registry.js'
import { blockedDeletes, renameHints, summarize, type PlanInput } from './plan.js'
import type { Plan, PlanChange } from './types.js'
import { UserError } from '../errors.js'

class PlanRefusal extends UserError {}

/** `dns-check:shop-dns` or `DnsCheck:shop-dns` → `dns-check:shop-dns`; undefined when the kind is unknown. */
export function parseTarget(text: string): string | undefined {
  const at = text.indexOf(':')
  if (at <= 0 || at === text.length - 1) return undefined
  const kindText = text.slice(0, at)
  const kind = isResourceKind(kindText) ? kindText : kindOfConstruct(kindText)
  return kind ? `${kind}:${text.slice(at + 1)}` : undefined
}

/** The `kind:logicalId` keys the `--target` texts name among `known`, and the texts that name none. */
export function matchTargets(targets: readonly string[], known: { has(key: string): boolean }): { wanted: Set<string>; bad: string[] } {
  const wanted = new Set<string>()
  const bad: string[] = []
  for (const text of targets) {
    const key = parseTarget(text)
    if (!key || !known.has(key)) bad.push(text)
    else wanted.add(key)
  }
  return { wanted, bad }
}

/**
 * The plan limited to the targeted resources and, transitively, what they depend on
 * (`--target`). A target that names nothing in the code or the lock is refused, naming the
 * allowed forms. With the plan's `input`, the deletes the service would refuse are found again
 * for the selection: what the full plan deleted with them (a status page using a service) may
 * be left out of it, and stay.
 */
export function selectTargets(plan: Plan, targets: readonly string[], input?: PlanInput): Plan {
  if (targets.length === 0) return plan
  const byKey = new Map<string, PlanChange>()
  for (const change of plan.changes) byKey.set(`${change.kind}:${change.logicalId}`, change)
  const { wanted, bad } = matchTargets(targets, byKey)
  if (bad.length > 0) {
    throw new PlanRefusal(
      `--target ${bad.map((t) => JSON.stringify(t)).join(', ')} ${bad.length === 1 ? 'names' : 'name'} no resource in the code or the lock. ` +
        `Write kind:logicalId, with kind one of ${RESOURCE_KINDS.join(', ')} (or the construct name, e.g. DnsCheck:shop-dns).`,
    )
  }
  const queue = [...wanted]
  while (queue.length > 0) {
    const change = byKey.get(queue.pop()!)
    for (const dep of change?.dependsOn ?? []) {
      if (!wanted.has(dep) && byKey.has(dep)) {
        wanted.add(dep)
        queue.push(dep)
      }
    }
  }
  const changes = plan.changes.filter((change) => wanted.has(`${change.kind}:${change.logicalId}`))
  const selected: Plan = { ...plan, changes, summary: summarize(changes), targets: [...new Set(targets.map((t) => parseTarget(t)!))] }
  const prot = plan.protected?.filter((p) => wanted.has(`${p.kind}:${p.logicalId}`))
  if (prot && prot.length > 0) selected.protected = prot
  else delete selected.protected
  const blocked = input ? blockedDeletes(changes, input) : plan.blocked?.filter((b) => wanted.has(`${b.kind}:${b.logicalId}`))
  if (blocked && blocked.length > 0) selected.blocked = blocked
  else delete selected.blocked
  const renames = renameHints(changes)
  if (renames.length > 0) selected.renames = renames
  else delete selected.renames
  return selected
}

/** Only the drift: what changed outside monitors (`plan --refresh-only`). */
export function driftOnly(plan: Plan): Plan {
  const changes = plan.changes.filter((change) => change.changedOutside || change.drift)
  const { protected: _p, renames: _r, ...rest } = plan
  return { ...rest, changes, summary: summarize(changes), refreshOnly: true }
}

/**
 * Refuses a plan that would delete or replace a protected resource, saying how to unprotect it.
 */
export function assertUnprotected(plan: Plan): void {
  if (!plan.protected || plan.protected.length === 0) return
  const unrecorded = plan.protected.filter((p) => p.unrecorded)
  if (unrecorded.length === plan.protected.length) {
    const lines = unrecorded.map(
      (p) => `  ${p.kind} ${p.logicalId}${p.file ? ` (${p.file})` : ''}: the code says protect: false, the lock still records protect: true`,
    )
    throw new PlanRefusal(
      `This plan would delete ${lines.length === 1 ? 'a resource' : `${lines.length} resources`} the lock still records as protected:\n${lines.join('\n')}\n` +
        'Run apply first to record protect: false in the lock (the plan shows it as a change of protect), then run this again.',
    )
  }
  const lines = plan.protected.map((p) => {
    const where = p.file ? ` (${p.file})` : ''
    const how =
      p.action === 'replace'
        ? 'it would be replaced (deleted, then created)'
        : p.file
          ? 'it would be deleted'
          : 'it would be deleted (it is no longer in the code)'
    const note = p.unrecorded ? ' (the code says protect: false, but the lock still records protect: true: apply first to record it)' : ''
    return `  ${p.kind} ${p.logicalId}${where}: ${how}${note}`
  })
  throw new PlanRefusal(
    `This plan would delete ${lines.length === 1 ? 'a protected resource' : `${lines.length} protected resources`}:\n${lines.join('\n')}\n` +
      'To allow it, set protect: false on the construct (put it back in the code first if it was removed), run apply so the lock records it, then run this again.',
  )
}

/** Refuses a plan with a delete the service would answer 409 to, naming what still uses it. */
export function assertNotBlocked(plan: Plan): void {
  if (!plan.blocked || plan.blocked.length === 0) return
  const lines = plan.blocked.map((b) => `  ${b.kind} ${b.logicalId} (id ${b.remoteId}) is still used by ${b.usedBy.join('; ')}`)
  throw new PlanRefusal(
    `This plan would delete ${lines.length === 1 ? 'a resource' : `${lines.length} resources`} the service refuses to delete while ${lines.length === 1 ? 'it is' : 'they are'} in use; nothing was changed:\n${lines.join('\n')}\n` +
      (plan.targets && plan.targets.length > 0
        ? 'Add what uses it to the --target list (it is deleted first), or remove the service from what uses it first.'
        : 'Remove the service from what uses it first (keep it in the code until then), or delete what uses it too.'),
  )
}

/**
 * Refuses a plan that creates what already exists remotely (see PlanChange.duplicateOf) unless
 * the duplicates are allowed. A variable's key is unique on the service: it is never allowed.
 */
export function assertNoDuplicates(plan: Plan, options: { allowDuplicates?: boolean } = {}): void {
  const duplicates = plan.changes.filter((c) => c.duplicateOf && c.action === 'create')
  const refused = options.allowDuplicates ? duplicates.filter((c) => UNIQUE_IDENTITY_KINDS.has(c.kind)) : duplicates
  if (refused.length === 0) return
  const lines = refused.map((c) => {
    const d = c.duplicateOf!
    const descriptor = descriptorOf(c.kind)
    const fields = descriptor.identity.fields.map((f) => descriptor.codeShape?.fieldInCode(f) ?? f)
    const unique = UNIQUE_IDENTITY_KINDS.has(c.kind)
      ? ` (a ${fields.join(' and ')} cannot exist twice: the service answers 409, so only --adopt-existing helps)`
      : ''
    // as a problem of the code is named: file › construct › field
    const where = `${c.file ? `${c.file} › ` : ''}${c.construct ?? c.kind} ${JSON.stringify(c.logicalId)} › ${fields.join(', ')}`
    return `  ${where}: already exists remotely as id ${d.remoteId}${d.name !== undefined ? ` "${d.name}"` : ''}, which this project's lock does not record${unique}`
  })
  const them = lines.length === 1 ? 'it' : 'them'
  const they = lines.length === 1 ? 'it is' : 'they are'
  const one = lines.length === 1 ? 'one' : 'ones'
  // --allow-duplicates is named only when it can help: some refused create is of a kind that may exist twice
  const copiable = refused.filter((c) => !UNIQUE_IDENTITY_KINDS.has(c.kind))
  const copies =
    copiable.length === 0
      ? ''
      : copiable.length === refused.length
        ? ', or with --allow-duplicates to create second copies anyway'
        : `, or with --allow-duplicates to create second copies anyway of ${copiable.map((c) => `${c.kind} ${c.logicalId}`).join(', ')}`
  throw new PlanRefusal(
    `This plan would create ${lines.length === 1 ? 'a resource that already exists' : `${lines.length} resources that already exist`}; nothing was changed:\n${lines.join('\n')}\n` +
      `Most often an earlier apply of this project made ${them} and its lock update was lost, but another project of the account may manage ${them}. ` +
      `If ${they} this project's, run again with --adopt-existing to record the existing ${one} in the lock and update ${them} to the code${copies} ` +
      '(for a saved plan: make it again with plan --adopt-existing --out <file>). ' +
      `If another project manages ${them}, adopting takes ${them} over (both projects would then change ${them}): give this project's ${one} ${lines.length === 1 ? 'its' : 'their'} own ` +
      `${[
        ...new Set(
          refused.map((c) =>
            descriptorOf(c.kind)
              .identity.fields.map((f) => descriptorOf(c.kind).codeShape?.fieldInCode(f) ?? f)
              .join(' and '),
          ),
        ),
      ].join(', ')} instead.`,
  )
}
