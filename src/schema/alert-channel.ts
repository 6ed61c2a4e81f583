import { z } from 'zod'
import { channelUrl, emailChannelSchema, slackChannelSchema, smsChannelSchema, webhookChannelSchema } from './check.js'

/**
 * The configuration of the channel types that only account-level alert channels have (the
 * inline `alertChannels` of a check have email, webhook, Slack and SMS). A URL is optional where
 * the service has a fixed endpoint: it names another region or a relay, and tests give a local
 * receiver.
 */

/** PagerDuty, Events API v2: `serviceKey` is the integration's routing key (a secret). */
export const pagerDutyChannelSchema = z.object({
  serviceKey: z.string().min(1),
  account: z.string().optional(),
  serviceName: z.string().optional(),
  /** the Events API v2 endpoint (default https://events.pagerduty.com/v2/enqueue; EU: https://events.eu.pagerduty.com/v2/enqueue) */
  url: channelUrl.optional(),
})

export const OPSGENIE_REGIONS = ['US', 'EU'] as const
export const OPSGENIE_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const

/** Opsgenie's Alert API: `apiKey` is an API integration's key (a secret). */
export const opsgenieChannelSchema = z.object({
  name: z.string().min(1),
  apiKey: z.string().min(1),
  region: z.enum(OPSGENIE_REGIONS).default('US'),
  priority: z.enum(OPSGENIE_PRIORITIES).default('P3'),
  /** the API's base URL (default by region: https://api.opsgenie.com, https://api.eu.opsgenie.com) */
  url: channelUrl.optional(),
})

/** A Microsoft Teams incoming webhook (or a Workflows webhook): its URL is its token (a secret). */
export const msTeamsChannelSchema = z.object({
  name: z.string().min(1),
  url: channelUrl,
})
