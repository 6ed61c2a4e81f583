import { z } from 'zod'
import { INCIDENT_UPDATE_STATUSES, SEVERITIES } from './enums.js'

/** Body of POST /v1/incidents and PUT /v1/incidents/{id}. */
export const incidentSchema = z.object({
  name: z.string().min(1).max(200),
  severity: z.enum(SEVERITIES),
  services: z.array(z.object({ id: z.string().min(1) })).default([]),
})

/** Body of POST /v1/incidents/{incidentId}/updates and PUT .../updates/{id}. */
export const incidentUpdateSchema = z.object({
  status: z.enum(INCIDENT_UPDATE_STATUSES),
  description: z.string().min(1).max(10000),
  notifySubscribers: z.boolean().default(false),
})

export type IncidentInput = z.input<typeof incidentSchema>
export type IncidentUpdateInput = z.input<typeof incidentUpdateSchema>
