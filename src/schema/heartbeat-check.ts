import { z } from 'zod'
import { checkBody, omitKeys } from './omit.js'
import { checkCommonShape, readOnlyShape } from './check.js'
import { crossField } from './cross-field.js'
import { queryNumber } from './paging.js'

/** Units of a heartbeat's period and grace (reference: ChecksV1HeartbeatRequest). */
export const HEARTBEAT_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const
export type HeartbeatUnit = (typeof HEARTBEAT_UNITS)[number]

const UNIT_MS: Record<HeartbeatUnit, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 }

/** Milliseconds of `amount` `unit`s. */
export const heartbeatMs = (amount: number, unit: HeartbeatUnit): number => amount * UNIT_MS[unit]

/** Shortest period: 30 seconds; longest period and grace: 365 days. */
export const HEARTBEAT_MIN_PERIOD_MS = 30_000
export const HEARTBEAT_MAX_MS = 365 * 86_400_000

/**
 * `heartbeat` of a heartbeat check: a ping is expected every `period` and may come up to
 * `grace` later. `pingToken` and `pingUrl` are assigned by the service: read-only, accepted
 * on input and dropped.
 */
export const heartbeatSettingsSchema = z
  .object({
    period: z.number().int().min(1),
    periodUnit: z.enum(HEARTBEAT_UNITS),
    grace: z.number().int().min(0),
    graceUnit: z.enum(HEARTBEAT_UNITS),
    pingToken: z.unknown().optional(),
    pingUrl: z.unknown().optional(),
  })
  .check(
    crossField((v, add) => {
      const unit = (u: unknown) => ((HEARTBEAT_UNITS as readonly unknown[]).includes(u) ? (u as HeartbeatUnit) : undefined)
      const periodUnit = unit(v.periodUnit)
      const graceUnit = unit(v.graceUnit)
      if (typeof v.period === 'number' && periodUnit) {
        const period = heartbeatMs(v.period, periodUnit)
        if (period < HEARTBEAT_MIN_PERIOD_MS || period > HEARTBEAT_MAX_MS) {
          add({ path: ['period'], message: `must be between 30 seconds and 365 days (got ${v.period} ${periodUnit})`, input: v.period })
        }
      }
      if (typeof v.grace === 'number' && graceUnit && heartbeatMs(v.grace, graceUnit) > HEARTBEAT_MAX_MS) {
        add({ path: ['grace'], message: `must be at most 365 days (got ${v.grace} ${graceUnit})`, input: v.grace })
      }
    }),
  )
  .transform((value) => omitKeys(value, ['pingToken', 'pingUrl']))

/**
 * Body of POST /v1/checks/heartbeat and PUT /v1/checks/heartbeat/{id} (reference:
 * ChecksV1HeartbeatCheckCreate). A heartbeat check is not run from locations: it is judged by
 * the pings it receives, so it has no request, and its locations and frequency are kept as
 * sent but mean nothing.
 */
export const heartbeatCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('HEARTBEAT').optional(),
    heartbeat: heartbeatSettingsSchema,
  })
  .transform((value) => checkBody(value, 'HEARTBEAT' as const))

export type HeartbeatCheckInput = z.input<typeof heartbeatCheckSchema>
export type HeartbeatCheck = z.output<typeof heartbeatCheckSchema>
export type HeartbeatSettings = z.output<typeof heartbeatSettingsSchema>

/** States of a heartbeat event (reference: HeartbeatsV1Event). */
export const HEARTBEAT_EVENT_STATES = ['FAILING', 'EARLY', 'RECEIVED', 'GRACE', 'LATE'] as const
export type HeartbeatEventState = (typeof HEARTBEAT_EVENT_STATES)[number]

/** Query of the availability and events routes: ISO dates or epoch ms. */
export const heartbeatRangeQuerySchema = z.object({
  startTime: z.string().optional(),
  endTime: z.string().optional(),
  limit: queryNumber(z.number().int().min(1).max(10)).default(10),
})
