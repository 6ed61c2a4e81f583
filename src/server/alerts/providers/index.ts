/**
 * The alert channel types, one provider each (Gatus's AlertProvider is the model): a new
 * channel type is one file in this folder and one row here. `satisfies` keeps the table whole:
 * a type of `ChannelType` without a provider does not compile.
 */
import type { ClaimedAlertDelivery } from '../../store/index.js'
import { email } from './email.js'
import { msTeams } from './msteams.js'
import { opsgenie } from './opsgenie.js'
import { pagerDuty } from './pagerduty.js'
import { slack } from './slack.js'
import { sms } from './sms.js'
import { refused, type AlertProvider, type ChannelType, type SendContext, type SendOutcome } from './types.js'
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

/** The provider of a channel type; undefined for a type this server does not know (a row written by a newer version). */
export function providerOf(type: string): AlertProvider | undefined {
  return Object.hasOwn(PROVIDERS, type) ? PROVIDERS[type as ChannelType] : undefined
}

/** Why a delivery is not attempted at all (NOT_DELIVERED), or undefined. */
export function notDeliverable(delivery: ClaimedAlertDelivery, context: Pick<SendContext, 'mailer'>): string | undefined {
  return providerOf(delivery.channelType)?.notDeliverable(context)
}

/**
 * One attempt (1 for the first) of a delivery, by its channel type's provider. A configuration
 * the provider refuses is not sent, and will not be later either.
 */
export function send(delivery: ClaimedAlertDelivery, attempt: number, context: SendContext): Promise<SendOutcome> {
  const provider = providerOf(delivery.channelType)
  if (!provider) return Promise.resolve(refused(`${delivery.channelType} channels are not delivered`))
  const problems = provider.validate(delivery.channel)
  if (problems.length > 0) {
    const [first] = problems
    return Promise.resolve(refused(`${provider.describe(delivery.channel).label}: ${first.path ? `${first.path} ` : ''}${first.message}`))
  }
  return provider.send(delivery, attempt, context)
}
