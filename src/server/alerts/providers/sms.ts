/**
 * An SMS channel (`{number, name}`). Sending a text message needs an SMS provider's account,
 * which the local server does not have: every delivery is recorded NOT_DELIVERED, saying so.
 */
import { smsChannelSchema } from '../../../schema/index.js'
import { problemsOf, refused, type AlertProvider } from './types.js'

export const SMS_NOT_DELIVERED = 'SMS is not delivered by the local server: it has no SMS provider'

export const sms: AlertProvider = {
  validate: (config) => problemsOf(smsChannelSchema, config),
  notDeliverable: () => SMS_NOT_DELIVERED,
  send: () => Promise.resolve(refused(SMS_NOT_DELIVERED)),
  describe(config) {
    const name = config.name ?? null
    const number = config.number ?? null
    return { label: `SMS to ${String(name ?? '')} (${String(number ?? '')})`, shown: { name, number } }
  },
}
