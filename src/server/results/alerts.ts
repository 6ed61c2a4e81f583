import type { AlertNotificationKind, AlertState } from '../store/index.js'

/*
 * Alerting from the check's fields (spec: alertSettings, muted, triggerIncident), one FINAL
 * result at a time. Pure: the caller reads the state, applies a result and writes the state
 * back in one transaction.
 *
 * - A run counts as failed when it has failures or errors; as degraded when it is degraded and
 *   not failed. With parallelRunFailureThreshold enabled, the check counts as failed only while
 *   at least `percentage` % of its locations have a failed newest run.
 * - RUN_BASED: alerting after `failedRunThreshold` consecutive failed runs (default 1).
 *   TIME_BASED: alerting once the check has been failing for `minutesFailingThreshold` minutes
 *   (default 5), measured from the first failed run to this run's end.
 *   The same thresholds apply to degraded runs (ALERT_DEGRADED).
 * - Reminders: while alerting, up to `reminders.amount` REMINDER notifications, the n-th due
 *   `n * reminders.interval` minutes after the alert; a reminder is given by the first failed
 *   run at or after its due time (there is no timer: a failing check keeps running).
 * - A passing run after an alert (failure or degraded) gives ALERT_RECOVERY; a degraded run after
 *   a failure alert recovers from the failure (and may escalate to degraded).
 * - Notifications are recorded per change of the alert's level (and per reminder), never per run;
 *   while alerting, a run that goes on failing (or degraded) leaves the state as it was (the
 *   counts only lead up to an alert), so the caller writes nothing for it.
 * - `muted`: the state moves the same, but no notification is recorded.
 * - `useGlobalAlertSettings` (default true): the account's settings apply; the local server has
 *   no account-level settings, so these are its defaults: RUN_BASED, threshold 1, no reminders,
 *   no parallel threshold.
 */

export interface AlertSettings {
  escalationType?: 'RUN_BASED' | 'TIME_BASED'
  runBasedEscalation?: { failedRunThreshold: number }
  timeBasedEscalation?: { minutesFailingThreshold: number }
  reminders?: { amount: number; interval: number }
  parallelRunFailureThreshold?: { enabled: boolean; percentage: number }
  sslCertificates?: { enabled?: boolean; alertThreshold?: number }
}

/** The fields of a check alerting reads. */
export interface AlertingCheck {
  name: string
  muted?: boolean
  locations?: string[] | null
  useGlobalAlertSettings?: boolean
  alertSettings?: AlertSettings
}

export const ACCOUNT_ALERT_SETTINGS: AlertSettings = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
}

const DEFAULT_MINUTES_FAILING = 5

export interface AlertRun {
  failed: boolean
  degraded: boolean
  /**
   * a check it depends on (dependsOn) is failing: the run moves the state as usual, but neither
   * alerts nor reminds (no notification, no incident); a later failed run alerts once none is
   */
  suppressed?: boolean
  location: string
  /** ISO times of the run */
  startedAt: string
  stoppedAt: string
}

export interface AlertStep {
  state: AlertState
  /** notifications to record (none when the check is muted) */
  notifications: AlertNotificationKind[]
  /** the check started alerting on a failure: open the incident */
  openIncident: boolean
  /** the failure alert ended: resolve the incident */
  resolveIncident: boolean
}

export function initialAlertState(): AlertState {
  return {
    consecutiveFailures: 0,
    consecutiveDegraded: 0,
    failingSince: null,
    degradedSince: null,
    level: 'NONE',
    alertedAt: null,
    remindersSent: 0,
    incidentId: null,
    locations: {},
  }
}

export function settingsOf(check: AlertingCheck): AlertSettings {
  return check.useGlobalAlertSettings === false && check.alertSettings ? check.alertSettings : ACCOUNT_ALERT_SETTINGS
}

function escalated(settings: AlertSettings, count: number, since: string | null, at: string): boolean {
  if (settings.escalationType === 'TIME_BASED') {
    const minutes = settings.timeBasedEscalation?.minutesFailingThreshold ?? DEFAULT_MINUTES_FAILING
    return since !== null && Date.parse(at) - Date.parse(since) >= minutes * 60_000
  }
  return count >= (settings.runBasedEscalation?.failedRunThreshold ?? 1)
}

/** Whether the check counts as failed now, given the newest run of each location. */
function checkFailed(settings: AlertSettings, check: AlertingCheck, locations: Record<string, boolean>, run: AlertRun): boolean {
  const parallel = settings.parallelRunFailureThreshold
  if (!parallel?.enabled) return run.failed
  const known = new Set([...(check.locations ?? []), ...Object.keys(locations)])
  const failing = [...known].filter((location) => locations[location] === true).length
  return known.size > 0 && (failing / known.size) * 100 >= parallel.percentage
}

export function applyRun(previous: AlertState | undefined, check: AlertingCheck, run: AlertRun): AlertStep {
  const settings = settingsOf(check)
  const state: AlertState = { ...(previous ?? initialAlertState()) }
  state.locations = { ...state.locations, [run.location]: run.failed }
  const failed = checkFailed(settings, check, state.locations, run)
  // a failed run under the parallel threshold counts as neither failed nor degraded
  const degraded = !failed && !run.failed && run.degraded
  const events: AlertNotificationKind[] = []
  let openIncident = false
  let resolveIncident = false

  // while alerting on it, a failure (or a degraded run) that goes on leaves the counts where they
  // are: only a change moves the state, so a long outage rewrites no row per run
  if (failed) {
    if (state.level !== 'FAILURE') state.consecutiveFailures += 1
    state.failingSince ??= run.startedAt
    state.consecutiveDegraded = 0
    state.degradedSince = null
  } else if (degraded) {
    if (state.level !== 'DEGRADED') state.consecutiveDegraded += 1
    state.degradedSince ??= run.startedAt
    state.consecutiveFailures = 0
    state.failingSince = null
  } else {
    state.consecutiveFailures = 0
    state.consecutiveDegraded = 0
    state.failingSince = null
    state.degradedSince = null
  }

  if (!failed && state.level === 'FAILURE') {
    events.push('ALERT_RECOVERY')
    resolveIncident = true
    state.level = 'NONE'
    state.alertedAt = null
    state.remindersSent = 0
  }
  if (!failed && !degraded && state.level === 'DEGRADED') {
    events.push('ALERT_RECOVERY')
    state.level = 'NONE'
    state.alertedAt = null
    state.remindersSent = 0
  }

  if (run.suppressed && (failed || degraded)) {
    // recorded, not alerted: the dependency's own alert says what is wrong
  } else if (failed) {
    if (state.level !== 'FAILURE') {
      if (escalated(settings, state.consecutiveFailures, state.failingSince, run.stoppedAt)) {
        events.push('ALERT_FAILURE')
        openIncident = true
        state.level = 'FAILURE'
        state.alertedAt = run.stoppedAt
        state.remindersSent = 0
      }
    } else {
      const reminders = settings.reminders
      if (reminders && reminders.amount > state.remindersSent && state.alertedAt !== null) {
        const due = Date.parse(state.alertedAt) + (state.remindersSent + 1) * reminders.interval * 60_000
        if (Date.parse(run.stoppedAt) >= due) {
          events.push('REMINDER')
          state.remindersSent += 1
        }
      }
    }
  } else if (degraded && state.level === 'NONE') {
    if (escalated(settings, state.consecutiveDegraded, state.degradedSince, run.stoppedAt)) {
      events.push('ALERT_DEGRADED')
      state.level = 'DEGRADED'
      state.alertedAt = run.stoppedAt
      state.remindersSent = 0
    }
  }

  return { state, notifications: check.muted ? [] : events, openIncident, resolveIncident }
}

/** The threshold when `sslCertificates` leaves it out (the reference's account default), and a channel's `sslExpiryThreshold` default. */
export const DEFAULT_SSL_ALERT_THRESHOLD = 30

/**
 * The check's own certificate alerts, from the days a run found its certificate has left (null:
 * the run saw no certificate: http, or no TLS handshake; nothing changes then), for its inline
 * `alertChannels`. Its `alertSettings.sslCertificates` (deprecated by the reference, kept here)
 * applies whenever it is set, whatever `useGlobalAlertSettings` says:
 * - days ≤ alertThreshold (an expired certificate too) and not alerted yet: ALERT_SSL;
 * - days > alertThreshold after ALERT_SSL (renewed): ALERT_SSL_RECOVERY;
 * - turned off (enabled false, or the setting removed) while alerted: back to not alerted, silently.
 * `muted`: the state moves, no notification. Changes `state` in place; returns the notifications.
 */
export function applyCertificate(state: AlertState, check: AlertingCheck, days: number | null): AlertNotificationKind[] {
  const setting = check.alertSettings?.sslCertificates
  const enabled = setting !== undefined && setting.enabled !== false
  if (!enabled) {
    if (state.sslAlerted) state.sslAlerted = false
    return []
  }
  if (days === null || !Number.isFinite(days)) return []
  const threshold = setting.alertThreshold ?? DEFAULT_SSL_ALERT_THRESHOLD
  const within = days <= threshold
  if (within === (state.sslAlerted === true)) return []
  state.sslAlerted = within
  if (check.muted) return []
  return [within ? 'ALERT_SSL' : 'ALERT_SSL_RECOVERY']
}

/** An account-level channel the check subscribes to (activated), as certificate alerts read it. */
export interface CertificateChannel {
  id: number
  sslExpiry?: boolean
  sslExpiryThreshold?: number
}

/** The certificate notifications of one run, and who gets each. */
export interface CertificateStep {
  /** ALERT_SSL and ALERT_SSL_RECOVERY to record, each at most once */
  notifications: AlertNotificationKind[]
  /** those the check's own `sslCertificates` gave: its inline `alertChannels` get them */
  inline: AlertNotificationKind[]
  /** for each, the subscribed channels whose own threshold the certificate entered (ALERT_SSL) or left (ALERT_SSL_RECOVERY) */
  channels: Partial<Record<AlertNotificationKind, number[]>>
}

/**
 * Every certificate alert of a run: the check's own (applyCertificate) and, as the hosted service
 * means a channel's `sslExpiry`, each subscribed channel's with `sslExpiry: true`, whatever the
 * check's `sslCertificates` says: ALERT_SSL once the certificate has the channel's
 * `sslExpiryThreshold` days (default 30) or fewer left, ALERT_SSL_RECOVERY once a renewal takes
 * it out, each channel once (`state.sslAlertedChannels`). A channel no longer subscribed, or
 * without `sslExpiry`, is forgotten silently. A run that saw no certificate changes nothing;
 * `muted`: the state moves, no notification. Changes `state` in place.
 */
export function applyCertificates(state: AlertState, check: AlertingCheck, days: number | null, channels: readonly CertificateChannel[]): CertificateStep {
  const own = applyCertificate(state, check, days)
  const step: CertificateStep = { notifications: [...own], inline: own, channels: {} }
  if (days === null || !Number.isFinite(days)) return step
  const alerted = new Set(state.sslAlertedChannels ?? [])
  const within: number[] = []
  for (const channel of channels) {
    if (channel.sslExpiry !== true) continue
    const inside = days <= (channel.sslExpiryThreshold ?? DEFAULT_SSL_ALERT_THRESHOLD)
    if (inside) within.push(channel.id)
    if (inside === alerted.has(channel.id) || check.muted) continue
    const kind: AlertNotificationKind = inside ? 'ALERT_SSL' : 'ALERT_SSL_RECOVERY'
    ;(step.channels[kind] ??= []).push(channel.id)
    if (!step.notifications.includes(kind)) step.notifications.push(kind)
  }
  // kept only while a channel is alerted, so that the state of a check without them does not move
  if (within.length > 0) state.sslAlertedChannels = within
  else delete state.sslAlertedChannels
  return step
}
