import type { MaintenanceWindow } from '../../schema/index.js'

/*
 * The occurrence of a maintenance window that covers a time, and the next one after it, with
 * the same rules as the scheduler (../scheduler/maintenance.ts): occurrence k starts at
 * startsAt + k × repeatInterval repeatUnit (MONTH in calendar months, UTC, the day clamped),
 * lasts endsAt − startsAt, and none starts after repeatEndsAt.
 */

const DAY = 86_400_000

function addMonthsUtc(time: number, months: number): number {
  const d = new Date(time)
  const month = d.getUTCMonth() + months
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), month + 1, 0)).getUTCDate()
  return Date.UTC(d.getUTCFullYear(), month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}

type Window = Pick<MaintenanceWindow, 'startsAt' | 'endsAt' | 'repeatInterval' | 'repeatUnit' | 'repeatEndsAt'>

export interface Occurrence {
  start: number
  end: number
}

/** Occurrence k, or undefined when there is none (no repeat, or after repeatEndsAt). */
function occurrence(window: Window, k: number): Occurrence | undefined {
  const start = Date.parse(window.startsAt)
  const duration = Date.parse(window.endsAt) - start
  if (Number.isNaN(start) || !(duration > 0) || k < 0) return undefined
  if (k === 0) return { start, end: start + duration }
  const interval = window.repeatInterval ?? null
  const unit = window.repeatUnit ?? null
  if (interval === null || unit === null) return undefined
  const at = unit === 'MONTH' ? addMonthsUtc(start, k * interval) : start + k * interval * (unit === 'DAY' ? DAY : 7 * DAY)
  if (window.repeatEndsAt && at > Date.parse(window.repeatEndsAt)) return undefined
  return { start: at, end: at + duration }
}

/** The first k whose occurrence may end after `at` (an estimate a few steps early at most). */
function firstCandidate(window: Window, at: number): number {
  const start = Date.parse(window.startsAt)
  const interval = window.repeatInterval ?? 1
  const duration = Date.parse(window.endsAt) - start
  if (!(at > start)) return 0
  const step = window.repeatUnit === 'MONTH' ? 31 * DAY : window.repeatUnit === 'WEEK' ? 7 * DAY : DAY
  return Math.max(0, Math.floor((at - start - duration) / (step * interval)) - 2)
}

/** The occurrence active at `at` and the next one starting after `at` (either may be missing). */
export function windowTimes(window: Window, at: number): { current?: Occurrence; next?: Occurrence } {
  let current: Occurrence | undefined
  for (let k = firstCandidate(window, at), tries = 0; tries < 400; k++, tries++) {
    const o = occurrence(window, k)
    if (!o) break
    if (o.start <= at && at < o.end) current ??= o
    if (o.start > at) return { current, next: o }
  }
  return { current }
}
