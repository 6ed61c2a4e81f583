import { z } from 'zod'
import { omitKeys } from './omit.js'
import { crossField } from './cross-field.js'
import { REPEAT_UNITS } from './enums.js'

const dateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-01-31T22:00:00Z' })

/** Body of POST /v1/maintenance-windows and PUT /v1/maintenance-windows/{id}. */
export const maintenanceWindowSchema = z
  .object({
    id: z.unknown().optional(),
    name: z.string().min(1).max(200),
    tags: z.array(z.string().min(1)).default([]),
    startsAt: dateTime,
    endsAt: dateTime,
    repeatInterval: z.number().int().min(1).max(365).nullish(),
    repeatUnit: z.enum(REPEAT_UNITS).nullish(),
    repeatEndsAt: dateTime.nullish(),
  })
  .check(
    crossField((v, add) => {
      const time = (x: unknown) => (typeof x === 'string' ? Date.parse(x) : NaN)
      const starts = time(v.startsAt)
      const ends = time(v.endsAt)
      if (!Number.isNaN(starts) && !Number.isNaN(ends) && ends <= starts) {
        add({ path: ['endsAt'], message: `must be after startsAt (${v.startsAt})`, input: v.endsAt })
      }
      const hasInterval = v.repeatInterval !== undefined && v.repeatInterval !== null
      const hasUnit = v.repeatUnit !== undefined && v.repeatUnit !== null
      if (hasInterval && !hasUnit) {
        add({ path: ['repeatUnit'], message: 'is required when repeatInterval is set (DAY, WEEK or MONTH)', input: v.repeatUnit })
      }
      if (hasUnit && !hasInterval) {
        add({ path: ['repeatInterval'], message: 'is required when repeatUnit is set (1-365)', input: v.repeatInterval })
      }
      const repeatEnds = time(v.repeatEndsAt)
      if (!Number.isNaN(repeatEnds) && !Number.isNaN(starts) && repeatEnds <= starts) {
        add({ path: ['repeatEndsAt'], message: `must be after startsAt (${v.startsAt})`, input: v.repeatEndsAt })
      }
    }),
  )
  .transform((value) => omitKeys(value, ['id']))

export type MaintenanceWindowInput = z.input<typeof maintenanceWindowSchema>
export type MaintenanceWindow = z.output<typeof maintenanceWindowSchema>
