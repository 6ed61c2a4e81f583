/**
 * Errors a user can cause, or that are not a bug in monitors (a refused request, an unreachable
 * server, a project written wrong): the CLI prints their message as one line and exits with
 * `exitCode`, never with a stack. Every layer may import this module; it imports nothing.
 *
 * Anything thrown that is not a `UserError` is a bug in monitors and reported as one.
 */

/** One problem the user can fix: where it is and what is allowed. */
export interface UserProblem {
  file?: string
  construct?: string
  field?: string
  message: string
}

export interface UserErrorOptions {
  /** Process exit code; 1 unless given. */
  exitCode?: number
  /** The problems behind the message, as data (a project's validation problems). */
  problems?: readonly UserProblem[]
  cause?: unknown
}

export class UserError extends Error {
  /** Marks the error in data (e.g. `toMatchObject({ userError: true })`); classify with `instanceof`. */
  readonly userError = true as const
  readonly exitCode: number
  readonly problems: readonly UserProblem[] | undefined

  constructor(message: string, options: UserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.exitCode = options.exitCode ?? 1
    this.problems = options.problems
  }
}
