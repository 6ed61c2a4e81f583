/**
 * Alert deliveries: what a notification says (event.ts), one attempt per channel (send.ts), and
 * the background sender that works through the outbox (worker.ts).
 */
export { alertTitle, deliveriesFor, emailMessage, slackMessage, SMS_NOT_DELIVERED, type AlertEvent } from './event.js'
export { AlertDeliveryWorker, checkSmtpUrl, type AlertDeliveryOptions } from './worker.js'
export { retryableStatus, webhookUrl } from './send.js'
