import { paint } from './color.js'
import { redact } from '../api/redact.js'
import { io } from './io.js'
import { UserError } from '../errors.js'

/**
 * Errors a user can cause are `UserError`s (src/errors.ts; the server runs inside the CLI's bundle,
 * so its errors are the same class). They print as their message alone. Anything else is a bug in
 * monitors: one line, and the stack only with MONITORS_DEBUG=1.
 */
export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError
}

export function reportError(error: unknown): number {
  const { stderr, env } = io()
  if (isUserError(error)) {
    stderr.write(`${paint().red('Error:')} ${redact(error.message)}\n`)
    return error.exitCode
  }
  const message = error instanceof Error ? error.message : String(error)
  stderr.write(`${paint().red('Internal error:')} ${redact(message)}\n`)
  if (env.MONITORS_DEBUG && error instanceof Error && error.stack) stderr.write(`${redact(error.stack)}\n`)
  else stderr.write('This is a bug in monitors. Run again with MONITORS_DEBUG=1 for details.\n')
  return 1
}
