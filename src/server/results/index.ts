/**
 * What the server does with every FINAL result of a check run: the check's status, its error
 * groups and its alert state (notifications recorded, incidents opened and resolved). The
 * scheduler and the agent routes call `recordResult` once a result is stored.
 */
import { notifyIncident } from '../alerts/subscribers.js'
import { randomUUID } from 'node:crypto'
import type { RunResult } from '../../runner/types.js'
import type { AlertChannelRecord, AlertNotificationKind, CheckRecord, Repositories, Store } from '../store/index.js'
import { applyCertificates, applyRun, type AlertingCheck, type CertificateStep } from './alerts.js'
import { cleanErrorMessage, errorHash } from './clean.js'
import { alertTitle, deliveriesFor, subscribedChannelIds, subscriptionDeliveries, type AlertEvent } from '../alerts/event.js'
import { recordAnalytics } from './analytics.js'
import { failingDependencies } from '../dependencies.js'
import { CHECK_TYPE_TABLE, isServiceCheckType } from '../../schema/check-types.js'
import { systemClock } from '../../runner/clock.js'

/**
 * What an HTTP run found (status code, certificate days), for the types whose table entry says
 * `certificates` (an API or a URL check); undefined for the others.
 */
function httpDetails(details: RecordableResult['details']): { statusCode?: number | null; sslDaysRemaining?: number | null } | undefined {
  if (!details || !isServiceCheckType(details.kind) || !CHECK_TYPE_TABLE[details.kind].certificates) return undefined
  return details as { statusCode?: number | null; sslDaysRemaining?: number | null }
}

export { cleanErrorMessage, errorHash } from './clean.js'
export { applyRun, initialAlertState, settingsOf, ACCOUNT_ALERT_SETTINGS, type AlertSettings, type AlertingCheck } from './alerts.js'
export { renderBadge, badgeMessage, groupBadgeState, BADGE_STYLES, BADGE_THEMES, type BadgeStyle, type BadgeTheme } from './badge.js'

/** A FINAL result, with the id its store gave it (`id` or `checkResultId`) when there is one. */
export type RecordableResult = RunResult & { id?: string; checkResultId?: string; sslDaysRemaining?: number | null; heartbeatState?: string }

/** The check as GET answers it: its parsed body, or the store's record of it. */
export type RecordableCheck = CheckRecord | (AlertingCheck & { id: string; triggerIncident?: TriggerIncident | null })

interface TriggerIncident {
  serviceId: string
  severity: string
  name: string
  description: string
  notifySubscribers?: boolean
}

export interface RecordOutcome {
  /** false when the result was recorded before (same id), was not FINAL, or its check is gone */
  recorded: boolean
  checkRunId: string
  notifications: AlertNotificationKind[]
  /** incident opened by this result */
  openedIncidentId?: string
  /** incident resolved by this result */
  resolvedIncidentId?: string
}

type CheckBody = AlertingCheck & {
  id: string
  triggerIncident?: TriggerIncident | null
  checkType?: unknown
  tags?: unknown
  alertChannels?: unknown
  alertChannelSubscriptions?: unknown
}

function bodyOf(check: RecordableCheck): CheckBody {
  if ('json' in check && typeof check.json === 'string') return JSON.parse(check.json) as CheckBody
  return check as CheckBody
}

function isStore(store: Store | Repositories): store is Store {
  return typeof (store as Store).transaction === 'function'
}

/**
 * Records one FINAL result: called with the Store it runs its own transaction; called with the
 * repositories of a transaction already open (`tx`), it writes in that one. Idempotent per
 * result id: a result whose id was recorded before (by any process) changes nothing. A result
 * without an id gets a new one (and cannot be recognised again).
 */
export async function recordResult(
  store: Store | Repositories,
  check: RecordableCheck,
  result: RecordableResult,
  options: RecordOptions = {},
): Promise<RecordOutcome> {
  const checkRunId = result.id ?? result.checkResultId ?? randomUUID()
  const body = bodyOf(check)
  const skipped: RecordOutcome = { recorded: false, checkRunId, notifications: [] }
  if (result.resultType !== 'FINAL') return skipped
  const write = (tx: Repositories) => recordIn(tx, body, result, checkRunId, options)
  return (await (isStore(store) ? store.transaction(write) : write(store))) ?? skipped
}

export interface RecordOptions {
  /**
   * The result's id was made by the store in this same transaction (a run's result): it cannot
   * have been recorded before, so it is not remembered for idempotency (one row less per result).
   */
  fresh?: boolean
  /**
   * The check's account, known to the caller (a run's result: its run's row, locked in this
   * transaction, is the check's, which cannot be deleted meanwhile): not read again.
   */
  account?: string
  /** when the alert deliveries it writes are due: now on the caller's clock (default: the system's, for a caller without a server) */
  now?: number
}

const nowOf = (options: RecordOptions): number => options.now ?? systemClock.now()

/** The check's triggerIncident: an incident opened when its alert fires, resolved when it recovers (in the run's transaction). */
async function incidentOf(
  tx: Repositories,
  account: string,
  check: CheckBody,
  result: RecordableResult,
  step: ReturnType<typeof applyRun>,
  outcome: RecordOutcome,
  now: number,
): Promise<void> {
  const trigger = check.triggerIncident
  if (step.openIncident && trigger && step.state.incidentId === null) {
    const incident = await tx.incidents.create(account, {
      name: trigger.name.slice(0, 200),
      severity: trigger.severity,
      services: [{ id: trigger.serviceId }],
    })
    const description = (trigger.description || `${check.name} is failing: ${result.error ?? 'the check failed'}`).slice(0, 10_000)
    await tx.incidents.addUpdate(account, incident.id, { status: 'INVESTIGATING', description, notifySubscribers: trigger.notifySubscribers ?? false })
    // emailed to the subscribers of the pages showing the service, with the run (same transaction)
    if (trigger.notifySubscribers) await notifyIncident(tx, account, incident, { status: 'INVESTIGATING', description }, now)
    step.state.incidentId = incident.id
    outcome.openedIncidentId = incident.id
  }
  if (step.resolveIncident && step.state.incidentId !== null) {
    // an incident deleted in the meantime is simply forgotten
    await tx.incidents.addUpdate(account, step.state.incidentId, {
      status: 'RESOLVED',
      description: `${check.name} recovered`.slice(0, 10_000),
      notifySubscribers: trigger?.notifySubscribers ?? false,
    })
    if (trigger?.notifySubscribers) {
      const incident = await tx.incidents.get(account, step.state.incidentId)
      if (incident) await notifyIncident(tx, account, incident, { status: 'RESOLVED', description: `${check.name} recovered` }, now)
    }
    outcome.resolvedIncidentId = step.state.incidentId
    step.state.incidentId = null
  }
}

async function recordIn(
  tx: Repositories,
  check: CheckBody,
  result: RecordableResult,
  checkRunId: string,
  options: RecordOptions,
): Promise<RecordOutcome | undefined> {
  const account = options.account ?? (await tx.checkStatuses.accountOf(check.id))
  if (account === undefined) return undefined
  if (!options.fresh && !(await tx.checkStatuses.claimResult(checkRunId, check.id))) return undefined

  // a dependency failing now (its newest result, recorded before this one) holds this check's
  // alerts back: read before this check's rows are locked (no lock is taken for it)
  const failed = result.hasFailures || result.hasErrors
  const suppressedBy = failed || result.isDegraded ? await failingDependencies(check, (id) => tx.checkStatuses.get(account, id)) : []

  // the certificate of the check's sslCheckDomain when it names one (the run's `sslDaysRemaining`,
  // null when it could not be read), else an https API or URL check's own, from its run's details
  // (the types with `certificates` in the table)
  const sslDaysRemaining = result.sslDaysRemaining !== undefined ? result.sslDaysRemaining : (httpDetails(result.details)?.sslDaysRemaining ?? null)
  // a failure's error group: the status keeps the check's newest error, so that a failure repeating it rewrites no group
  const cleaned = failed && result.error ? cleanErrorMessage(result.error) : undefined
  const error = cleaned === undefined ? undefined : { errorHash: errorHash(cleaned), rawErrorMessage: result.error as string, seenAt: result.stoppedAt }
  const previousError = await tx.checkStatuses.record(account, check.id, {
    hasFailures: result.hasFailures,
    hasErrors: result.hasErrors,
    isDegraded: result.isDegraded,
    responseTime: result.responseTime,
    runLocation: result.runLocation,
    checkRunId,
    sslDaysRemaining,
    startedAt: result.startedAt,
    ...(error ? { error } : {}),
  })

  // analytics rollups, in the same transaction as the result
  await recordAnalytics(tx, account, check.id, String((check as { checkType?: unknown }).checkType ?? result.checkType), result)

  if (error && cleaned !== undefined) await tx.errorGroups.record(account, check.id, { ...error, cleanedErrorMessage: cleaned }, previousError ?? null)

  const previous = await tx.alerts.state(check.id)
  const step = applyRun(previous, check, {
    failed,
    degraded: result.isDegraded,
    suppressed: suppressedBy.length > 0,
    location: result.runLocation,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
  })
  // the account-level channels the check subscribes to: read when a notification may go to them
  // (a run that saw a certificate may alert a channel with sslExpiry)
  const subscribed = subscribedChannelIds(check.alertChannelSubscriptions)
  const channels =
    subscribed.length > 0 && (step.notifications.length > 0 || sslDaysRemaining !== null) ? await tx.alertChannels.byIds(account, subscribed) : []
  // certificate alerts: entering a threshold (the check's sslCertificates, each channel's sslExpiryThreshold), and leaving it when renewed
  const certificates = applyCertificates(
    step.state,
    check,
    sslDaysRemaining,
    channels.map((c) => ({ id: c.id, sslExpiry: c.channel.sslExpiry, sslExpiryThreshold: c.channel.sslExpiryThreshold })),
  )
  step.notifications.push(...certificates.notifications)
  const outcome: RecordOutcome = { recorded: true, checkRunId, notifications: step.notifications }
  const incidentBefore = step.state.incidentId
  await incidentOf(tx, account, check, result, step, outcome, nowOf(options))
  // a state that did not move (a passing check passing again) is not written again
  if (previous === undefined || JSON.stringify(previous) !== JSON.stringify(step.state)) await tx.alerts.save(account, check.id, step.state)

  // every notification goes to the check's alert channels (inline, and the account's channels it
  // subscribes to): written to the outbox here, in this transaction, and sent by the server's
  // delivery worker (never while the run is recorded)
  const incidentId = outcome.openedIncidentId ?? outcome.resolvedIncidentId ?? incidentBefore
  for (const kind of step.notifications) {
    const notification = await tx.alerts.notify(account, check.id, kind, checkRunId)
    const event = alertEvent(check, result, notification.id, kind, checkRunId, notification.created_at, incidentId)
    const now = nowOf(options)
    const to = recipients(kind, check, channels, certificates)
    await tx.alertDeliveries.enqueue(account, [...deliveriesFor(to.inline, event, now), ...subscriptionDeliveries(to.channels, event, now)])
  }
  return outcome
}

/**
 * Who gets a notification: the check's inline channels and its subscribed channels (by their
 * settings: subscriptionDeliveries); a certificate alert only those whose threshold it crossed
 * (the inline channels by the check's sslCertificates, a channel by its own sslExpiryThreshold).
 */
function recipients(
  kind: AlertNotificationKind,
  check: CheckBody,
  channels: AlertChannelRecord[],
  certificates: CertificateStep,
): { inline: unknown; channels: AlertChannelRecord[] } {
  if (kind !== 'ALERT_SSL' && kind !== 'ALERT_SSL_RECOVERY') return { inline: check.alertChannels, channels }
  const crossed = certificates.channels[kind] ?? []
  return { inline: certificates.inline.includes(kind) ? check.alertChannels : undefined, channels: channels.filter((c) => crossed.includes(c.id)) }
}

function alertEvent(
  check: CheckBody,
  result: RecordableResult,
  id: string,
  kind: AlertNotificationKind,
  checkRunId: string,
  notifiedAt: string,
  incidentId: string | null,
): AlertEvent {
  const api = httpDetails(result.details)
  return {
    id,
    alertType: kind,
    title: alertTitle(kind, check.name),
    checkId: check.id,
    checkName: check.name,
    checkType: typeof check.checkType === 'string' ? check.checkType : (result.checkType ?? null),
    tags: Array.isArray(check.tags) ? check.tags.filter((t): t is string => typeof t === 'string') : [],
    checkResultId: checkRunId,
    runLocation: result.runLocation,
    responseTime: result.responseTime,
    statusCode: api?.statusCode ?? null,
    hasFailures: result.hasFailures,
    hasErrors: result.hasErrors,
    isDegraded: result.isDegraded,
    errorMessage: result.error,
    sslDaysRemaining: result.sslDaysRemaining !== undefined ? result.sslDaysRemaining : (api?.sslDaysRemaining ?? null),
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
    notifiedAt,
    incidentId,
  }
}
