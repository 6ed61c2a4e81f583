/**
 * Rules of the API that span more than one field. Each returns the problem as a message
 * (without the field name) or undefined when the value is allowed. They live here once and
 * are used by the schemas, hence by the constructs, the client and the server alike.
 */

/**
 * Frequency 0 (sub-minute) is only for API and TCP checks, never for DNS or ICMP checks, nor as
 * their config default. `listAllowed` adds the frequencies allowed instead.
 */
export function subMinuteFrequencyProblem(frequency: unknown, listAllowed = false): string | undefined {
  if (frequency !== 0) return undefined
  const allowed = listAllowed ? ' (allowed: 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440)' : ''
  return `must not be 0: sub-minute frequencies are only for API and TCP checks${allowed}`
}

/** The allowed frequencyOffset range for a frequency (spec: frequencyOffset rules 2-4). */
export function frequencyOffsetRange(frequency: number): { min: number; max: number; values?: number[] } {
  if (frequency === 0) return { min: 10, max: 30, values: [10, 20, 30] }
  if (frequency <= 60) return { min: 1, max: Math.floor(frequency * 10) }
  return { min: 1, max: Math.ceil(frequency / 60) }
}

export function frequencyOffsetProblem(frequency: unknown, offset: unknown): string | undefined {
  if (offset === undefined || offset === null) return undefined
  if (typeof frequency !== 'number' || typeof offset !== 'number' || !Number.isInteger(offset)) return undefined
  // below the minimum of 1 the field's own rule says so; one message per problem
  if (offset < 1) return undefined
  const range = frequencyOffsetRange(frequency)
  if (range.values) {
    if (!range.values.includes(offset)) return `must be 10, 20 or 30 when frequency is 0 (got ${offset})`
    return undefined
  }
  if (offset < range.min || offset > range.max) {
    return `must be ${range.min}-${range.max} when frequency is ${frequency} (got ${offset})`
  }
  return undefined
}
