/**
 * The one clock of the server and the runner: every wall-clock read of `src/server/` and
 * `src/runner/` goes through a `Clock`. The server makes one at its start (`startLocalServer`:
 * the system clock, or the one its options name) and passes it down; a test drives its own
 * instead of sleeping. `test/architecture.test.ts` fails on a `Date.now()` or an argument-less
 * `new Date()` anywhere else in those folders.
 *
 * Elapsed time (how long a probe or a statement took, how long a real timer has left) is not a
 * wall-clock read: it is measured with `performance.now()`, which a test's clock must not move.
 */
export interface Clock {
  /** milliseconds since the epoch */
  now(): number
}

/** The system's clock; a `now` as a function of its own, so it may be passed on unbound. */
export const systemClock: Clock = { now: () => Date.now() }

/** `clock`'s time as an ISO 8601 string (what `new Date().toISOString()` was). */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString()
}
