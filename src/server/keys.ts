import { createHash, randomBytes } from 'node:crypto'

/** Keys are random high-entropy tokens, so one sha256 is enough to store and look them up. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

export function defaultAccountId(key: string): string {
  return `acc_${createHash('sha256').update(`account:${key}`, 'utf8').digest('hex').slice(0, 12)}`
}

export function generateKey(): string {
  return `mon_${randomBytes(24).toString('base64url')}`
}
