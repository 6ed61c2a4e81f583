import type { ResourceKind } from './types.js'
import { descriptorOf } from './registry.js'
import { normalize } from './normalize.js'
import { fingerprintSecret, SECRET_MASK } from './secrets.js'
import { hashValue } from './stable-json.js'

/** A copy of a payload with every secret value replaced, by the mask or by `replace(value)`. */
export function maskSecrets(
  kind: ResourceKind,
  payload: Record<string, unknown>,
  replace: (value: string) => string = () => SECRET_MASK,
): Record<string, unknown> {
  const { secrets } = descriptorOf(kind)
  if (secrets.self && payload.secret === true && typeof payload.value === 'string') {
    return { ...payload, value: replace(payload.value) }
  }
  let out = payload
  for (const field of secrets.arrays) {
    const items = payload[field]
    if (!Array.isArray(items) || !items.some((v: { secret?: boolean }) => v?.secret)) continue
    if (out === payload) out = { ...payload }
    out[field] = items.map((v: Record<string, unknown>) => (v?.secret && typeof v.value === 'string' ? { ...v, value: replace(v.value) } : v))
  }
  return out
}

/** The lock's `appliedHash`: the normalized payload as sent, secret values left out. */
export function appliedHash(kind: ResourceKind, payload: Record<string, unknown>): string {
  return hashValue(maskSecrets(kind, normalize(kind, payload)))
}

/**
 * A plan's `desiredHash`: the normalized desired payload, secret values masked (a saved plan
 * fingerprints secrets separately, salted: see saved.ts).
 */
export function desiredHash(kind: ResourceKind, normalized: Record<string, unknown>): string {
  return hashValue(maskSecrets(kind, normalized))
}

/** The fingerprint of a secret variable's value for the lock, or undefined. */
export function secretHashOf(kind: ResourceKind, payload: Record<string, unknown>): string | undefined {
  if (descriptorOf(kind).secrets.self && payload.secret === true && typeof payload.value === 'string') return fingerprintSecret(payload.value)
  return undefined
}
