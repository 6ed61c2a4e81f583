/**
 * The alert channel types, one provider each (Gatus's AlertProvider is the model): a new
 * channel type is one file in this folder and one row here. `satisfies` keeps the table whole:
 * a type of `ChannelType` without a provider does not compile.
 */
import { ALERT_CHANNEL_SECRETS, alertChannelSecretStrings, type ChannelSecretTable } from '../../../schema/index.js'
import { createScrubber } from '../../../runner/script/scrub.js'
import type { ClaimedAlertDelivery } from '../../store/index.js'
import { email } from './email.js'
import { msTeams } from './msteams.js'
import { opsgenie } from './opsgenie.js'
import { pagerDuty } from './pagerduty.js'
import { slack } from './slack.js'
import { sms } from './sms.js'
import { refused, type AlertProvider, type ChannelDescription, type ChannelType, type SendContext, type SendOutcome } from './types.js'
import { webhook } from './webhook.js'

export type { AlertProvider, ChannelDescription, ChannelType, SendContext, SendOutcome } from './types.js'

export const PROVIDERS = {
  WEBHOOK: webhook,
  SLACK: slack,
  EMAIL: email,
  SMS: sms,
  PAGERDUTY: pagerDuty,
  OPSGENIE: opsgenie,
  MSTEAMS: msTeams,
} as const satisfies Record<ChannelType, AlertProvider>

/**
 * The channel types a delivery can go to: each one's provider, and which fields of its
 * configuration are secret (src/schema/alert-channel.ts). A test gives a copy with a type of
 * its own.
 */
export interface ChannelTypes {
  providers: Readonly<Record<string, AlertProvider>>
  secrets: ChannelSecretTable
}

export const CHANNEL_TYPES: ChannelTypes = { providers: PROVIDERS, secrets: ALERT_CHANNEL_SECRETS }

/** The provider of a channel type; undefined for a type this server does not know (a row written by a newer version). */
export function providerOf(type: string, types: ChannelTypes = CHANNEL_TYPES): AlertProvider | undefined {
  return Object.hasOwn(types.providers, type) ? types.providers[type] : undefined
}

const MIN_SCRUBBED = 4

/** What scrubs a channel's secrets, as its type declares them, from a text or a value. */
function scrubberOf(type: string, config: Record<string, unknown>, types: ChannelTypes) {
  // a value of a few characters is no key, and would scrub the letters of every word
  return createScrubber(alertChannelSecretStrings(type, config, types.secrets).filter((secret) => secret.length >= MIN_SCRUBBED))
}

/**
 * A channel as deliveries and messages show it: its provider's description, with whatever of
 * the type's secret fields the description would still hold scrubbed. A type this server does
 * not know shows nothing of its configuration.
 */
export function describeChannel(type: string, config: Record<string, unknown>, types: ChannelTypes = CHANNEL_TYPES): ChannelDescription {
  const provider = providerOf(type, types)
  if (!provider) return { label: `${type} channel`, shown: {} }
  const described = provider.describe(config)
  const scrub = scrubberOf(type, config, types)
  return scrub.empty ? described : { label: scrub.text(described.label), shown: scrub.deep(described.shown) }
}

/** Why a delivery is not attempted at all (NOT_DELIVERED), or undefined. */
export function notDeliverable(delivery: ClaimedAlertDelivery, context: Pick<SendContext, 'mailer'>, types: ChannelTypes = CHANNEL_TYPES): string | undefined {
  return providerOf(delivery.channelType, types)?.notDeliverable(context)
}

/**
 * One attempt (1 for the first) of a delivery, by its channel type's provider. A configuration
 * the provider refuses is not sent, and will not be later either. The outcome's error, which
 * the delivery keeps and answers show, never holds the channel's secrets (a receiver may echo
 * its URL or key).
 */
export async function send(delivery: ClaimedAlertDelivery, attempt: number, context: SendContext, types: ChannelTypes = CHANNEL_TYPES): Promise<SendOutcome> {
  const provider = providerOf(delivery.channelType, types)
  if (!provider) return refused(`${delivery.channelType} channels are not delivered`)
  const problems = provider.validate(delivery.channel)
  if (problems.length > 0) {
    const [first] = problems
    return refused(`${describeChannel(delivery.channelType, delivery.channel, types).label}: ${first.path ? `${first.path} ` : ''}${first.message}`)
  }
  const outcome = await provider.send(delivery, attempt, context)
  if (outcome.error === null) return outcome
  return { ...outcome, error: scrubberOf(delivery.channelType, delivery.channel, types).text(outcome.error) }
}
