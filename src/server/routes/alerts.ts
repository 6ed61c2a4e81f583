import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { pageQuerySchema, queryBoolean, queryNumber, queryTime, rangeProblem } from '../../schema/index.js'
import { notFound, parseOr400 } from '../errors.js'
import type { AlertDeliveryRecord, AlertNotificationRecord, Store } from '../store/index.js'
import { contentRange } from './util.js'
import { describeChannel } from '../alerts/providers/index.js'

/*
 * Reads of alert notifications and of their deliveries to the checks' alert channels, with
 * every attempt (the project's own routes: the reference names none). Lists are newest first
 * and paged like checks. A channel is shown as its type's provider describes it, without what
 * may be secret: a webhook's headers and query parameters, the path of a Slack URL (its token),
 * credentials in a URL.
 */

/** Query of GET /v1/alert-notifications: the reference's filters (docs/api.md "Alert notifications") and a check's. */
const notificationQuery = pageQuerySchema
  .extend({
    checkId: z.string().min(1).optional(),
    from: queryTime.optional(),
    to: queryTime.optional(),
    alertChannelId: queryNumber(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).optional(),
    hasFailures: queryBoolean.optional(),
  })
  .superRefine((value, ctx) => {
    for (const issue of rangeProblem(value)) ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message })
  })
const deliveryQuery = pageQuerySchema.extend({ checkId: z.string().min(1).optional(), notificationId: z.string().min(1).optional() })

/** A channel as its provider shows it (never what may be secret); nothing of it when its type is unknown here. */
function presentChannel(record: AlertDeliveryRecord): Record<string, unknown> {
  const { shown } = describeChannel(record.channelType, record.channel)
  // a delivery to an account-level channel names it
  return typeof record.channel.alertChannelId === 'number' ? { alertChannelId: record.channel.alertChannelId, ...shown } : shown
}

export function presentDelivery(record: AlertDeliveryRecord) {
  return {
    id: record.id,
    notificationId: record.notificationId,
    checkId: record.checkId,
    alertType: record.alertType,
    channelType: record.channelType,
    channel: presentChannel(record),
    status: record.status,
    reason: record.reason,
    attemptCount: record.attempts.length,
    nextAttemptAt: record.nextAttemptAt === null ? null : new Date(record.nextAttemptAt).toISOString(),
    attempts: record.attempts,
    event: record.event,
    created_at: record.created_at,
    updated_at: record.updated_at,
  }
}

function presentNotification(record: AlertNotificationRecord, deliveries: AlertDeliveryRecord[]) {
  return {
    id: record.id,
    checkId: record.checkId,
    alertType: record.kind,
    checkResultId: record.checkRunId,
    created_at: record.created_at,
    deliveries: deliveries.map(presentDelivery),
  }
}

export function alertRoutes(app: FastifyInstance, store: Store): void {
  async function checkExists(account: string, checkId: string | undefined): Promise<void> {
    if (checkId !== undefined && !(await store.checks.get(account, checkId))) throw notFound('Check')
  }

  app.get('/v1/alert-notifications', async (request, reply) => {
    const query = parseOr400(notificationQuery, request.query, 'query')
    await checkExists(request.accountId, query.checkId)
    const offset = (query.page - 1) * query.limit
    const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())
    const { items, total } = await store.alertDeliveries.notifications(request.accountId, {
      checkId: query.checkId,
      from: iso(query.from),
      to: iso(query.to),
      alertChannelId: query.alertChannelId,
      hasFailures: query.hasFailures,
      limit: query.limit,
      offset,
    })
    const deliveries = await store.alertDeliveries.ofNotifications(
      request.accountId,
      items.map((n) => n.id),
    )
    reply.header('content-range', contentRange(offset, items.length, total))
    return items.map((n) =>
      presentNotification(
        n,
        deliveries.filter((d) => d.notificationId === n.id),
      ),
    )
  })

  app.get('/v1/alert-deliveries', async (request, reply) => {
    const query = parseOr400(deliveryQuery, request.query, 'query')
    await checkExists(request.accountId, query.checkId)
    const offset = (query.page - 1) * query.limit
    const { items, total } = await store.alertDeliveries.list(request.accountId, {
      checkId: query.checkId,
      notificationId: query.notificationId,
      limit: query.limit,
      offset,
    })
    reply.header('content-range', contentRange(offset, items.length, total))
    return items.map(presentDelivery)
  })

  app.get<{ Params: { id: string } }>('/v1/alert-deliveries/:id', async (request) => {
    const delivery = await store.alertDeliveries.get(request.accountId, request.params.id)
    if (!delivery) throw notFound('Alert delivery')
    return presentDelivery(delivery)
  })
}
