import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Fingerprints of secret values, kept in the lock so that a plan can tell whether a secret
 * changed although the API reads every secret back as "". The stored form names its scheme
 * (`sha256:<hex>`), so a stronger, salted scheme can be added beside it and older lock files
 * keep verifying.
 */
export function fingerprintSecret(value: string): string {
  return `sha256:${createHash('sha256').update(`monitors-secret\0${value}`).digest('hex')}`
}

/** Whether `value` is the secret that `stored` fingerprints. Unknown schemes never match. */
export function secretMatches(value: string, stored: string | undefined): boolean {
  if (!stored) return false
  const [scheme] = stored.split(':', 1)
  if (scheme === 'sha256') {
    const expected = Buffer.from(stored)
    const actual = Buffer.from(fingerprintSecret(value))
    return expected.length === actual.length && timingSafeEqual(expected, actual)
  }
  return false
}

/** What output shows instead of a secret value. */
export const SECRET_MASK = '(secret)'
