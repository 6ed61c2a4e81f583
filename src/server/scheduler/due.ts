import { createHash } from 'node:crypto'
import { DEFAULT_LOCATION } from '../../runner/index.js'

/*
 * When a check is due, and where. Pure functions of the check and the time.
 *
 * Period P: `frequency` minutes (frequency 0, API and TCP checks only: `frequencyOffset` seconds).
 *
 * Phase within the period, from `frequencyOffset` (spec: 1..floor(frequency × 10) up to
 * frequency 60, 1..ceil(frequency / 60) above it; in both cases the largest offset spans the
 * whole period):
 * - frequency 1–60: one offset step is 6 seconds (frequency 10: offsets 1..100 spread runs
 *   over the 10 minutes in 6-second steps);
 * - frequency above 60: one offset step is one hour (frequency 1440: offsets 1..24);
 * - phase = (offset × step) mod P; no offset: a stable spread from the check's id,
 *   sha256(id) mod P in whole seconds, so many checks of one frequency do not all start on
 *   the same second;
 * - frequency 0: the offset is the period itself (10, 20 or 30 s), so the phase is the stable
 *   spread from the id (a second from 0 to P − 1): a thousand checks every 10 seconds start
 *   about a hundred a second, not all a thousand on the same one.
 *
 * Due times are t = k × P + phase (k an integer, counted from the Unix epoch, UTC).
 * Locations: every location at each due time with `runParallel`; otherwise one location per
 * due time, in turn: locations[k mod n]. A check's private locations (their slugs) follow its
 * public ones in that list. A check without locations of either kind runs in `local`.
 */

export interface ScheduleFields {
  id: string
  frequency?: number
  frequencyOffset?: number
  locations?: string[] | null
  privateLocations?: string[] | null
  runParallel?: boolean
}

const SIX_SECONDS = 6_000
const HOUR = 3_600_000

export function periodMs(check: ScheduleFields): number {
  const frequency = check.frequency ?? 10
  if (frequency === 0) return (check.frequencyOffset ?? 10) * 1000
  return frequency * 60_000
}

export function phaseMs(check: ScheduleFields): number {
  const period = periodMs(check)
  const frequency = check.frequency ?? 10
  if (frequency !== 0 && check.frequencyOffset !== undefined) {
    const step = frequency <= 60 ? SIX_SECONDS : HOUR
    return (check.frequencyOffset * step) % period
  }
  const hash = createHash('sha256').update(check.id).digest()
  return (hash.readUInt32BE(0) % (period / 1000)) * 1000
}

/** Period and phase of a check: fixed by its fields, so the planner works them out once per version of the check. */
export interface Timing {
  period: number
  phase: number
}

export function timingOf(check: ScheduleFields): Timing {
  return { period: periodMs(check), phase: phaseMs(check) }
}

/** latestDue from a check's timing (no hashing). */
export function latestDueOf(timing: Timing, at: number): { index: number; dueAt: number } {
  const index = Math.floor((at - timing.phase) / timing.period)
  return { index, dueAt: index * timing.period + timing.phase }
}

/** The due index k of the latest due time at or before `at`. */
export function dueIndexAt(check: ScheduleFields, at: number): number {
  return Math.floor((at - phaseMs(check)) / periodMs(check))
}

export function dueTime(check: ScheduleFields, index: number): number {
  return index * periodMs(check) + phaseMs(check)
}

/** The latest due time at or before `at`. */
export function latestDue(check: ScheduleFields, at: number): { index: number; dueAt: number } {
  const index = dueIndexAt(check, at)
  return { index, dueAt: dueTime(check, index) }
}

export function checkLocations(check: ScheduleFields): string[] {
  const all = [...(check.locations ?? []), ...(check.privateLocations ?? [])]
  return all.length > 0 ? all : [DEFAULT_LOCATION]
}

/** The locations the run of due index k goes to: all of them in parallel, or the next in turn. */
export function locationsFor(check: ScheduleFields, index: number): string[] {
  const locations = checkLocations(check)
  if (check.runParallel) return locations
  const n = locations.length
  return [locations[((index % n) + n) % n]]
}

/**
 * A due time missed by more than this (the server was down, no runner was free) is skipped:
 * the next one runs. One period, at most 5 minutes.
 */
export function graceMs(check: ScheduleFields): number {
  return Math.min(periodMs(check), 5 * 60_000)
}
