/**
 * The pure rules of the scheduler: due times and their spread (frequencyOffset), locations in
 * turn or in parallel, and maintenance windows with their repeat rule.
 */
import { describe, expect, it } from 'vitest'
import { dueTime, graceMs, latestDue, locationsFor, periodMs, phaseMs } from '../../../src/server/scheduler/due.js'
import { inMaintenance, isWindowActive } from '../../../src/server/scheduler/maintenance.js'

const at = (iso: string) => Date.parse(iso)

describe('due times', () => {
  it('frequency up to 60: the offset is in 6-second steps within the period', () => {
    expect(periodMs({ id: 'a', frequency: 10 })).toBe(600_000)
    expect(phaseMs({ id: 'a', frequency: 10, frequencyOffset: 1 })).toBe(6_000)
    expect(phaseMs({ id: 'a', frequency: 10, frequencyOffset: 50 })).toBe(300_000)
    // the largest offset spans the whole period: back to its start
    expect(phaseMs({ id: 'a', frequency: 10, frequencyOffset: 100 })).toBe(0)
    expect(phaseMs({ id: 'a', frequency: 1, frequencyOffset: 5 })).toBe(30_000)
    const check = { id: 'a', frequency: 5, frequencyOffset: 10 }
    expect(latestDue(check, at('2026-01-01T10:03:00Z')).dueAt).toBe(at('2026-01-01T10:01:00Z'))
    expect(latestDue(check, at('2026-01-01T10:06:00Z')).dueAt).toBe(at('2026-01-01T10:06:00Z'))
  })

  it('frequency above 60: the offset is in hours', () => {
    expect(phaseMs({ id: 'a', frequency: 1440, frequencyOffset: 3 })).toBe(3 * 3_600_000)
    const check = { id: 'a', frequency: 1440, frequencyOffset: 3 }
    expect(latestDue(check, at('2026-01-02T02:00:00Z')).dueAt).toBe(at('2026-01-01T03:00:00Z'))
    expect(graceMs(check)).toBe(300_000)
  })

  it('without an offset, a stable spread from the id, in whole seconds within the period', () => {
    const phases = ['a', 'b', 'c', 'd', 'e'].map((id) => phaseMs({ id, frequency: 10 }))
    for (const p of phases) {
      expect(p % 1000).toBe(0)
      expect(p).toBeGreaterThanOrEqual(0)
      expect(p).toBeLessThan(600_000)
    }
    expect(new Set(phases).size).toBeGreaterThan(1)
    expect(phaseMs({ id: 'a', frequency: 10 })).toBe(phases[0])
  })

  it('frequency 0 (API and TCP checks): every frequencyOffset seconds, at a stable second of the period spread by the id', () => {
    expect(periodMs({ id: 'a', frequency: 0, frequencyOffset: 20 })).toBe(20_000)
    const phases = Array.from({ length: 50 }, (_, i) => phaseMs({ id: `check-${i}`, frequency: 0, frequencyOffset: 10 }))
    for (const p of phases) {
      expect(p % 1000).toBe(0)
      expect(p).toBeGreaterThanOrEqual(0)
      expect(p).toBeLessThan(10_000)
    }
    // 50 checks every 10 s do not all start on the same second
    expect(new Set(phases).size).toBeGreaterThan(5)
    const phase = phaseMs({ id: 'a', frequency: 0, frequencyOffset: 20 })
    expect(dueTime({ id: 'a', frequency: 0, frequencyOffset: 20 }, 3)).toBe(60_000 + phase)
    expect(dueTime({ id: 'a', frequency: 0, frequencyOffset: 20 }, 4) - dueTime({ id: 'a', frequency: 0, frequencyOffset: 20 }, 3)).toBe(20_000)
  })

  it('one location per run in turn, or all of them with runParallel; none: local', () => {
    const check = { id: 'a', frequency: 1, locations: ['eu-west-1', 'us-east-1', 'ap-south-1'] }
    expect([0, 1, 2, 3, 4].map((k) => locationsFor(check, k))).toEqual([['eu-west-1'], ['us-east-1'], ['ap-south-1'], ['eu-west-1'], ['us-east-1']])
    expect(locationsFor({ ...check, runParallel: true }, 7)).toEqual(check.locations)
    expect(locationsFor({ id: 'a', locations: null }, 5)).toEqual(['local'])
  })
})

describe('maintenance windows', () => {
  const once = { startsAt: '2026-03-01T10:00:00Z', endsAt: '2026-03-01T12:00:00Z', repeatInterval: null, repeatUnit: null, repeatEndsAt: null }

  it('a single window covers [startsAt, endsAt)', () => {
    expect(isWindowActive(once, at('2026-03-01T09:59:59Z'))).toBe(false)
    expect(isWindowActive(once, at('2026-03-01T10:00:00Z'))).toBe(true)
    expect(isWindowActive(once, at('2026-03-01T11:59:59Z'))).toBe(true)
    expect(isWindowActive(once, at('2026-03-01T12:00:00Z'))).toBe(false)
    expect(isWindowActive(once, at('2026-03-02T11:00:00Z'))).toBe(false)
  })

  it('repeats every N days or weeks until repeatEndsAt', () => {
    const daily = { ...once, repeatInterval: 2, repeatUnit: 'DAY' as const, repeatEndsAt: '2026-03-05T10:00:00Z' }
    expect(isWindowActive(daily, at('2026-03-02T11:00:00Z'))).toBe(false)
    expect(isWindowActive(daily, at('2026-03-03T11:00:00Z'))).toBe(true)
    // the occurrence starting exactly at repeatEndsAt is the last one
    expect(isWindowActive(daily, at('2026-03-05T11:00:00Z'))).toBe(true)
    expect(isWindowActive(daily, at('2026-03-07T11:00:00Z'))).toBe(false)
    const weekly = { ...once, repeatInterval: 1, repeatUnit: 'WEEK' as const }
    expect(isWindowActive(weekly, at('2026-03-08T10:30:00Z'))).toBe(true)
    expect(isWindowActive(weekly, at('2026-03-09T10:30:00Z'))).toBe(false)
    expect(isWindowActive(weekly, at('2027-03-07T10:30:00Z'))).toBe(true)
  })

  it('an occurrence longer than the repeat step overlaps the next', () => {
    const long = { startsAt: '2026-03-01T00:00:00Z', endsAt: '2026-03-04T00:00:00Z', repeatInterval: 2, repeatUnit: 'DAY' as const, repeatEndsAt: null }
    expect(isWindowActive(long, at('2026-03-10T12:00:00Z'))).toBe(true)
  })

  it('monthly on calendar months, the day clamped to the end of a short month', () => {
    const monthly = { startsAt: '2026-01-31T22:00:00Z', endsAt: '2026-01-31T23:00:00Z', repeatInterval: 1, repeatUnit: 'MONTH' as const, repeatEndsAt: null }
    expect(isWindowActive(monthly, at('2026-02-28T22:30:00Z'))).toBe(true)
    expect(isWindowActive(monthly, at('2026-03-31T22:30:00Z'))).toBe(true)
    expect(isWindowActive(monthly, at('2026-03-30T22:30:00Z'))).toBe(false)
    const quarterly = { ...monthly, repeatInterval: 3, repeatEndsAt: '2026-06-01T00:00:00Z' }
    expect(isWindowActive(quarterly, at('2026-04-30T22:30:00Z'))).toBe(true)
    expect(isWindowActive(quarterly, at('2026-03-31T22:30:00Z'))).toBe(false)
    expect(isWindowActive(quarterly, at('2026-07-31T22:30:00Z'))).toBe(false)
  })

  it('applies to a check sharing one of its tags', () => {
    const window = { ...once, tags: ['db', 'edge'] }
    const during = at('2026-03-01T11:00:00Z')
    expect(inMaintenance(['edge'], [window], during)).toBe(true)
    expect(inMaintenance(['web'], [window], during)).toBe(false)
    expect(inMaintenance([], [window], during)).toBe(false)
    expect(inMaintenance(['edge'], [window], at('2026-03-01T13:00:00Z'))).toBe(false)
  })
})
