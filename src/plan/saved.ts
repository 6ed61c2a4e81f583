import { createHash, randomBytes, scryptSync } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { RemoteState } from '../api/resources.js'
import type { LockFile } from '../state/lock.js'
import { descriptorOf } from '../resources/registry.js'
import { appliedHash, maskSecrets } from '../resources/hashes.js'
import { normalizeParsed } from '../resources/normalize.js'
import { hashValue, stableStringify } from '../resources/stable-json.js'
import { planToJson, PLAN_FORMAT_VERSION, type JsonPlan } from './render/json.js'
import { maskLocked } from './render/view.js'
import type { Plan, PlanChange } from './types.js'
import { UserError } from '../errors.js'

/**
 * A saved plan (`plan --out plan.json`, `apply plan.json`): the plan, and fingerprints of what
 * it was computed from. Apply recomputes them and runs the saved operations only when all
 * match; otherwise it refuses, naming what changed. No secret value is in the file: secrets
 * are masked in the plan and fingerprinted together with a random salt through scrypt.
 */
export interface SavedPlan {
  formatVersion: number
  type: 'monitors-saved-plan'
  createdAt: string
  plan: JsonPlan
  /** The internal plan the executor runs (secrets masked, as in `plan`). */
  operations: PlanChange[]
  fingerprints: Fingerprints
}

export interface Fingerprints {
  /** Hash of the desired state: every resource's payload (secrets masked), references and options. */
  code: string
  /** scrypt of every secret value of the code with `salt`; absent without secrets. */
  secrets?: { salt: string; hash: string }
  /** sha256 of the lock file's text, or `none`. */
  lock: string
  /** Every resource the lock knows: its remote record's hash, or `absent`. Keyed `kind:logicalId`. */
  remote: Record<string, { remoteId: string; hash: string }>
}

class SavedPlanError extends UserError {}

function secretValues(desired: readonly DesiredResource[]): string[] {
  const out: string[] = []
  for (const r of desired) {
    const descriptor = descriptorOf(r.kind)
    if (descriptor.secrets.self && r.payload.secret === true) out.push(`${r.kind}:${r.logicalId}\0${String(r.payload.value)}`)
    const blanked = descriptor.blankedSecrets?.(r.payload)
    if (blanked) out.push(`${r.kind}:${r.logicalId}:blanked\0${blanked.text}`)
    if (Array.isArray(r.payload.environmentVariables)) {
      for (const v of r.payload.environmentVariables as Array<Record<string, unknown>>) {
        if (v?.secret) out.push(`${r.kind}:${r.logicalId}:${String(v.key)}\0${String(v.value)}`)
      }
    }
  }
  return out
}

export function codeFingerprint(desired: readonly DesiredResource[]): string {
  return hashValue(desired.map((r) => ({ kind: r.kind, logicalId: r.logicalId, payload: maskSecrets(r.kind, r.payload), refs: r.refs, options: r.options })))
}

function secretsFingerprint(desired: readonly DesiredResource[], salt: string): string {
  return scryptSync(secretValues(desired).join('\n'), Buffer.from(salt, 'base64url'), 32, { N: 1 << 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString(
    'base64url',
  )
}

export function lockFingerprint(lockText: string | undefined): string {
  return lockText === undefined ? 'none' : `sha256:${createHash('sha256').update(lockText).digest('hex')}`
}

function remoteFingerprints(lock: LockFile | undefined, remote: RemoteState): Fingerprints['remote'] {
  const out: Fingerprints['remote'] = {}
  for (const [key, entry] of Object.entries(lock?.resources ?? {})) {
    const record = remote.records[entry.kind as ResourceKind]?.[entry.remoteId]
    out[key] = { remoteId: entry.remoteId, hash: record ? hashValue(normalizeParsed(entry.kind, record)) : 'absent' }
  }
  return out
}

export function fingerprint(options: {
  desired: readonly DesiredResource[]
  lock: LockFile | undefined
  lockText: string | undefined
  remote: RemoteState
  salt?: string
}): Fingerprints {
  const out: Fingerprints = {
    code: codeFingerprint(options.desired),
    lock: lockFingerprint(options.lockText),
    remote: remoteFingerprints(options.lock, options.remote),
  }
  if (secretValues(options.desired).length > 0) {
    const salt = options.salt ?? randomBytes(16).toString('base64url')
    out.secrets = { salt, hash: secretsFingerprint(options.desired, salt) }
  }
  return out
}

export function makeSavedPlan(plan: Plan, fingerprints: Fingerprints, now = new Date()): SavedPlan {
  return {
    formatVersion: PLAN_FORMAT_VERSION,
    type: 'monitors-saved-plan',
    createdAt: now.toISOString(),
    plan: planToJson(plan),
    // Apply sends the code's payloads, never these: locked values stay out of the file.
    operations: plan.changes.filter((c) => c.action !== 'noop').map(maskLocked),
    fingerprints,
  }
}

export function writeSavedPlan(path: string, saved: SavedPlan): void {
  writeFileSync(path, `${stableStringify(saved, 2)}\n`)
}

export function readSavedPlan(path: string): SavedPlan {
  let data: unknown
  try {
    data = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    throw new SavedPlanError(
      e.code === 'ENOENT'
        ? `There is no saved plan at ${path}. Save one with: monitors plan --out ${path}`
        : `${path} is not a saved plan (${e.message.split('\n')[0]}).`,
    )
  }
  const saved = data as Partial<SavedPlan>
  if (saved?.type !== 'monitors-saved-plan' || !Array.isArray(saved.operations) || !saved.fingerprints || !saved.plan) {
    throw new SavedPlanError(`${path} is not a saved plan of monitors (made by "monitors plan --out ${path}").`)
  }
  if (saved.formatVersion !== PLAN_FORMAT_VERSION) {
    throw new SavedPlanError(
      `${path} has format version ${saved.formatVersion}; this version of monitors applies version ${PLAN_FORMAT_VERSION}. Run plan --out again.`,
    )
  }
  return saved as SavedPlan
}

/** Whether the code (and its secret values) is as when the plan was saved. */
export function codeUnchanged(saved: SavedPlan, now: Fingerprints, desired: readonly DesiredResource[]): boolean {
  const then = saved.fingerprints
  const secretsNow = then.secrets ? secretsFingerprint(desired, then.secrets.salt) : undefined
  return then.code === now.code && (then.secrets ? secretsNow === then.secrets.hash : now.secrets === undefined)
}

/**
 * What changed since the plan was saved, one line each; empty when the saved plan still holds.
 * With the lock and the remote state of now, a remote change the lock records (an apply made
 * it: the record is what the lock says was last applied) is told from one made outside monitors.
 */
export function staleReasons(
  saved: SavedPlan,
  now: Fingerprints,
  desired: readonly DesiredResource[],
  state?: { lock: LockFile | undefined; remote: RemoteState },
): string[] {
  const reasons: string[] = []
  const then = saved.fingerprints
  if (!codeUnchanged(saved, now, desired)) reasons.push('the code changed (a check file, the config or a secret value)')
  if (then.lock !== now.lock) reasons.push('the lock file changed (another apply ran, or it was edited)')
  for (const [key, before] of Object.entries(then.remote)) {
    const after = now.remote[key]
    if (!after) continue // gone from the lock: reported as a lock change
    if (after.hash !== before.hash) {
      const what = after.hash === 'absent' ? 'was deleted' : before.hash === 'absent' ? 'appeared again' : 'was changed'
      const entry = state?.lock?.resources[key]
      const record = entry ? state?.remote.records[entry.kind]?.[entry.remoteId] : undefined
      const byApply = entry !== undefined && record !== undefined && appliedHash(entry.kind, record) === entry.appliedHash
      reasons.push(`remote ${key} (id ${before.remoteId}) ${what} ${byApply ? 'by an apply since (the lock records it)' : 'outside monitors'}`)
    }
  }
  return reasons
}

/**
 * Whether every operation of the saved plan is done already: the code is as when it was saved,
 * and a plan made now (`fresh`) has nothing left to do for any of its resources. So it is an
 * earlier apply of this very plan that made the lock and the remote resources differ.
 */
export function appliedAlready(saved: SavedPlan, fresh: Plan, unchangedCode: boolean): boolean {
  if (!unchangedCode || saved.operations.length === 0) return false
  const now = new Map(fresh.changes.map((c) => [`${c.kind}:${c.logicalId}`, c]))
  return saved.operations.every((op) => {
    const change = now.get(`${op.kind}:${op.logicalId}`)
    if (op.action === 'delete' || op.action === 'forget') return change === undefined
    return change !== undefined && change.action === 'noop'
  })
}

/**
 * Why a saved plan is not for this run's environment (`--env`), or undefined when it is: made
 * for another environment, or made with one and applied without (or the other way round).
 */
export function savedEnvironmentMismatch(saved: SavedPlan, environment: string | undefined, file: string): string | undefined {
  const then = saved.plan.environment
  if (then === environment) return undefined
  if (then !== undefined && environment !== undefined) {
    return `the plan was made for the environment "${then}", but this run is for the environment "${environment}": a plan for one environment is never applied to another (run: monitors apply ${file} --env ${then})`
  }
  if (then !== undefined)
    return `the plan was made for the environment "${then}", but this run names no environment (run: monitors apply ${file} --env ${then})`
  return `the plan was made without an environment, but this run is for the environment "${environment}": make the plan with --env ${environment}`
}

export function savedTargetMismatch(saved: SavedPlan, target: Plan['target']): string | undefined {
  const t = saved.plan.target
  if (t.id !== target.id || (t.accountId ?? '') !== (target.accountId ?? '')) {
    return `the plan was made for ${t.baseUrl}${t.accountId ? ` (account ${t.accountId})` : ''}, but the target is ${target.baseUrl}${target.accountId ? ` (account ${target.accountId})` : ''}`
  }
  return undefined
}
