import type { MaintenanceWindow } from '../../schema/index.js'

/*
 * Whether a maintenance window is active at a time. Occurrence k (k = 0, 1, …) starts at
 * startsAt + k × repeatInterval repeatUnit (DAY, WEEK; MONTH adds calendar months in UTC,
 * the day clamped to the month's last day) and lasts endsAt − startsAt. Without a repeat rule
 * there is only occurrence 0. With `repeatEndsAt`, no occurrence starts after it. An
 * occurrence covers [start, end): active at its start, no longer at its end.
 */

const DAY = 86_400_000

function addMonthsUtc(time: number, months: number): number {
  const d = new Date(time)
  const year = d.getUTCFullYear()
  const month = d.getUTCMonth() + months
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}

export function isWindowActive(window: Pick<MaintenanceWindow, 'startsAt' | 'endsAt' | 'repeatInterval' | 'repeatUnit' | 'repeatEndsAt'>, at: number): boolean {
  const start = Date.parse(window.startsAt)
  const end = Date.parse(window.endsAt)
  if (Number.isNaN(start) || Number.isNaN(end) || end <= start || at < start) return false
  const duration = end - start
  if (at < end) return true
  const interval = window.repeatInterval ?? null
  const unit = window.repeatUnit ?? null
  if (interval === null || unit === null) return false
  const repeatEnds = window.repeatEndsAt ? Date.parse(window.repeatEndsAt) : Infinity
  if (unit === 'DAY' || unit === 'WEEK') {
    const step = interval * (unit === 'DAY' ? DAY : 7 * DAY)
    // occurrences that started at or before `at` and end after it: k in [kMin, kMax]
    const kMax = Math.floor((at - start) / step)
    const kMin = Math.max(0, Math.floor((at - start - duration) / step) + 1)
    const kLast = Number.isFinite(repeatEnds) ? Math.floor((repeatEnds - start) / step) : Infinity
    return kMin <= Math.min(kMax, kLast)
  }
  // MONTH: the latest occurrence starting at or before `at`, then earlier ones while they may still cover it
  const from = new Date(start)
  const to = new Date(at)
  let k = Math.floor(((to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth()) / interval) + 1
  for (let tries = 0; k >= 0 && tries < 1000; k--, tries++) {
    const occurrence = addMonthsUtc(start, k * interval)
    if (occurrence > at) continue
    if (occurrence + duration <= at) return false
    if (occurrence <= repeatEnds) return true
  }
  return false
}

/** Whether any window carrying one of the check's tags is active at `at`. */
export function inMaintenance(
  checkTags: readonly string[],
  windows: ReadonlyArray<Pick<MaintenanceWindow, 'tags' | 'startsAt' | 'endsAt' | 'repeatInterval' | 'repeatUnit' | 'repeatEndsAt'>>,
  at: number,
): boolean {
  if (checkTags.length === 0) return false
  return windows.some((window) => window.tags.some((tag) => checkTags.includes(tag)) && isWindowActive(window, at))
}
