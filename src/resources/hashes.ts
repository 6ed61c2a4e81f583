import type { ResourceDescriptor, ResourceKind } from './types.js'
import { descriptorOf } from './registry.js'
import { normalize, normalizeParsed } from './normalize.js'
import { fingerprintSecret, SECRET_MASK } from './secrets.js'
import { hashValue } from './stable-json.js'

/** A copy of a payload with every secret value replaced, by the mask or by `replace(value)`. */
export function maskSecrets(
  kind: ResourceKind,
  payload: Record<string, unknown>,
  replace: (value: string) => string = () => SECRET_MASK,
): Record<string, unknown> {
  return maskSecretsOf(descriptorOf(kind).secrets, payload, replace)
}

/** The same by a descriptor's `secrets` (a kind the registry does not hold: a test's). */
export function maskSecretsOf(
  secrets: ResourceDescriptor['secrets'],
  payload: Record<string, unknown>,
  replace: (value: string) => string = () => SECRET_MASK,
): Record<string, unknown> {
  if (secrets.self && payload.secret === true && typeof payload.value === 'string') {
    return { ...payload, value: replace(payload.value) }
  }
  let out = payload
  for (const field of secrets.arrays) out = maskAt(out, field.split('.'), replace)
  return out
}

/**
 * `payload` with the secrets at a dotted path masked: an array of `{ secret, value }` items
 * (its secret items' values), or a string (always a secret, e.g. `request.basicAuth.password`);
 * a step ending in `[]` goes through every item of an array (`alertChannels.webhook[].headers`).
 * Objects on the way are copied, never changed.
 */
function maskAt(node: Record<string, unknown>, steps: string[], replace: (value: string) => string): Record<string, unknown> {
  const [first, ...rest] = steps
  const each = first.endsWith('[]')
  const step = each ? first.slice(0, -2) : first
  const value = node[step]
  if (each) {
    if (!Array.isArray(value) || rest.length === 0) return node
    let changed = false
    const items = value.map((item: unknown) => {
      if (!item || typeof item !== 'object' || Array.isArray(item)) return item
      const inner = maskAt(item as Record<string, unknown>, rest, replace)
      if (inner !== item) changed = true
      return inner
    })
    return changed ? { ...node, [step]: items } : node
  }
  if (rest.length > 0) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return node
    const inner = maskAt(value as Record<string, unknown>, rest, replace)
    return inner === value ? node : { ...node, [step]: inner }
  }
  if (typeof value === 'string') return value === '' ? node : { ...node, [step]: replace(value) }
  if (!Array.isArray(value) || !value.some((v: { secret?: boolean }) => v?.secret)) return node
  return { ...node, [step]: value.map((v: Record<string, unknown>) => (v?.secret && typeof v.value === 'string' ? { ...v, value: replace(v.value) } : v)) }
}

/** The lock's `appliedHash`: the normalized payload as sent, secret values left out. */
export function appliedHash(kind: ResourceKind, payload: Record<string, unknown>): string {
  return hashValue(maskSecrets(kind, normalize(kind, payload)))
}

/**
 * The same as `appliedHash` for a payload that already is its schema's output (the desired
 * state, references resolved to ids): the schema pass is skipped, as the plan's normalization
 * of the desired side does. An apply of 10,000 creates spent more time re-parsing its own
 * payloads than on anything else of its own.
 */
export function appliedHashOfParsed(kind: ResourceKind, payload: Record<string, unknown>): string {
  return hashValue(maskSecrets(kind, normalizeParsed(kind, payload)))
}

/**
 * A plan's `desiredHash`: the normalized desired payload, secret values masked (a saved plan
 * fingerprints secrets separately, salted: see saved.ts).
 */
export function desiredHash(kind: ResourceKind, normalized: Record<string, unknown>): string {
  return hashValue(maskSecrets(kind, normalized))
}

/**
 * The fingerprint for the lock of a secret variable's value, or of the secret values a resource
 * reads back as "" (an API check's), or undefined.
 */
export function secretHashOf(kind: ResourceKind, payload: Record<string, unknown>): string | undefined {
  const descriptor = descriptorOf(kind)
  if (descriptor.secrets.self && payload.secret === true && typeof payload.value === 'string') return fingerprintSecret(payload.value)
  const blanked = descriptor.blankedSecrets?.(payload)
  return blanked ? fingerprintSecret(blanked.text) : undefined
}
