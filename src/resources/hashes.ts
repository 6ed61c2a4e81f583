import type { ResourceKind } from './types.js'
import { normalize } from './normalize.js'
import { fingerprintSecret, SECRET_MASK } from './secrets.js'
import { hashValue } from './stable-json.js'

/** A copy of a payload with every secret value replaced, by the mask or by `replace(value)`. */
export function maskSecrets(
  kind: ResourceKind,
  payload: Record<string, unknown>,
  replace: (value: string) => string = () => SECRET_MASK,
): Record<string, unknown> {
  if (kind === 'variable' && payload.secret === true && typeof payload.value === 'string') {
    return { ...payload, value: replace(payload.value) }
  }
  if (Array.isArray(payload.environmentVariables) && payload.environmentVariables.some((v: { secret?: boolean }) => v?.secret)) {
    return {
      ...payload,
      environmentVariables: payload.environmentVariables.map((v: Record<string, unknown>) =>
        v?.secret && typeof v.value === 'string' ? { ...v, value: replace(v.value) } : v,
      ),
    }
  }
  return payload
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
  if (kind === 'variable' && payload.secret === true && typeof payload.value === 'string') return fingerprintSecret(payload.value)
  return undefined
}
