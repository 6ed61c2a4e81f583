import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto'

/**
 * Fingerprints of secret values, kept in the lock so that a plan can tell whether a secret
 * changed although the API reads every secret back as "". The stored form names its scheme:
 * `scrypt:<salt>:<hash>` (salt and hash base64url, a fresh random salt per entry, so equal
 * secrets never look equal and a leaked lock file is slow to guess against). Lock files of
 * earlier versions hold `sha256:<hex>`, which still verifies.
 */
const SCRYPT = { N: 1 << 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }
const KEY_LENGTH = 32

function scrypt(value: string, salt: Buffer): Buffer {
  return scryptSync(`monitors-secret\0${value}`, salt, KEY_LENGTH, SCRYPT)
}

/** A new salted fingerprint of a secret value (a fresh salt each time). */
export function fingerprintSecret(value: string, salt: Buffer = randomBytes(16)): string {
  return `scrypt:${salt.toString('base64url')}:${scrypt(value, salt).toString('base64url')}`
}

function legacySha256(value: string): string {
  return `sha256:${createHash('sha256').update(`monitors-secret\0${value}`).digest('hex')}`
}

/** Verifications are slow on purpose; one process asks about the same pair at most once. */
const verified = new Map<string, boolean>()

/** Whether `value` is the secret that `stored` fingerprints. Unknown schemes never match. */
export function secretMatches(value: string, stored: string | undefined): boolean {
  if (!stored) return false
  const memo = `${stored}\0${createHash('sha256').update(value).digest('hex')}`
  const known = verified.get(memo)
  if (known !== undefined) return known
  let result = false
  const [scheme, salt, hash] = stored.split(':')
  if (scheme === 'scrypt' && salt && hash) {
    const expected = Buffer.from(hash, 'base64url')
    const actual = scrypt(value, Buffer.from(salt, 'base64url'))
    result = expected.length === actual.length && timingSafeEqual(expected, actual)
  } else if (scheme === 'sha256') {
    const expected = Buffer.from(stored)
    const actual = Buffer.from(legacySha256(value))
    result = expected.length === actual.length && timingSafeEqual(expected, actual)
  }
  verified.set(memo, result)
  return result
}

/** What output shows instead of a secret value. */
export const SECRET_MASK = '(secret)'
/** What a field diff of a secret whose value changed shows. */
export const SECRET_CHANGED = '(secret changed)'
