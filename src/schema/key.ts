import { z } from 'zod'

/**
 * What an API key may do (docs/security.md): read (GET only), write (read and every write of
 * the account's resources), agent (only the agent routes), admin (everything, and the keys).
 */
export const KEY_ROLES = ['read', 'write', 'agent', 'admin'] as const
export type KeyRole = (typeof KEY_ROLES)[number]

export const keyRoleSchema = z.enum(KEY_ROLES, { message: `must be one of ${KEY_ROLES.join(', ')}` })

/** A key's name: a label for people ("github-actions"), not a secret. */
export const keyNameSchema = z.string().trim().min(1, { message: 'must not be empty' }).max(100, { message: 'must be at most 100 characters' })

/** Body of POST /v1/keys (admin keys): a new key of the caller's account. */
export const keyCreateSchema = z.object({
  role: keyRoleSchema,
  name: keyNameSchema.nullable().optional(),
})
