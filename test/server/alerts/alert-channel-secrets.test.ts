/**
 * An alert channel type says once which fields of its configuration are secret
 * (ALERT_CHANNEL_SECRETS, src/schema/alert-channel.ts), and everything that must not show them
 * reads that: masking on read, the plan's `(secret)` and the lock's fingerprint, import's
 * environment variables, and deliveries (the channel as they show it, their errors). A fixture
 * adds a type of its own (a Discord webhook, whose URL is its token) through the same functions
 * given copies of the tables; every real type is checked with its sample (CHANNEL_SAMPLES).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { normalize } from '../../../src/resources/normalize.js'
import { DESCRIPTORS } from '../../../src/resources/registry.js'
import { maskSecrets, maskSecretsOf } from '../../../src/resources/hashes.js'
import { channelDescriptor } from '../../../src/resources/kinds/alert-channel.js'
import { SECRET_MASK } from '../../../src/resources/secrets.js'
import type { ResourceDescriptor, ResourceKind } from '../../../src/resources/types.js'
import { secretSites } from '../../../src/import/codegen.js'
import {
  ALERT_CHANNEL_SECRETS,
  ALERT_CHANNEL_TYPES,
  alertChannelSecretValues,
  blankAlertChannelPayload,
  blankAlertChannelSecrets,
  channelUrl,
  type AlertChannelKind,
  type ChannelSecrets,
} from '../../../src/schema/index.js'
import { CHANNEL_TYPES, describeChannel, PROVIDERS, send, type AlertProvider, type ChannelTypes } from '../../../src/server/alerts/providers/index.js'
import { problemsOf } from '../../../src/server/alerts/providers/types.js'
import type { ClaimedAlertDelivery } from '../../../src/server/store/index.js'
import { CHANNEL_SAMPLES } from './alerts-helpers.js'

const TOKEN = 'SECRET-discord-token-4242'
const WEBHOOK_URL = `https://discord.example/api/webhooks/1234567/${TOKEN}`

const discordConfig = z.object({ name: z.string().min(1), webhookUrl: channelUrl, username: z.string().optional() })
const discordSecrets: ChannelSecrets = { webhookUrl: 'tokenUrl' }

/** A provider careless on purpose: it describes the channel with its URL, and its receiver's answer echoes it. */
const discord: AlertProvider = {
  validate: (config) => problemsOf(discordConfig, config),
  notDeliverable: () => undefined,
  send: async (delivery) => ({ delivered: false, retryable: false, statusCode: 404, error: `HTTP 404: no webhook at ${String(delivery.channel.webhookUrl)}` }),
  describe: (config) => ({
    label: `Discord ${JSON.stringify(config.name)} (${String(config.webhookUrl)})`,
    shown: { name: config.name, webhookUrl: config.webhookUrl },
  }),
}

/** The server's channel types with the fixture's added, as a new type would be. */
const withDiscord: ChannelTypes = { providers: { ...PROVIDERS, DISCORD: discord }, secrets: { ...ALERT_CHANNEL_SECRETS, DISCORD: discordSecrets } }

/** The client's kind of the fixture's type, made as the real ones are. */
const discordKind = channelDescriptor(
  'discord-alert-channel' as ResourceKind,
  'DiscordAlertChannel',
  'DISCORD',
  "const chat = new DiscordAlertChannel('chat', { name: 'ops', webhookUrl: process.env.DISCORD_URL ?? '' })",
  'config.name',
  { config: discordConfig, secrets: discordSecrets },
)

const delivery = (channelType: string, channel: Record<string, unknown>) =>
  ({ id: 'd-1', channelType, channel, alertType: 'ALERT_FAILURE', event: {}, attempts: 0 }) as unknown as ClaimedAlertDelivery
const context = { signal: new AbortController().signal, timeoutMs: 1000, userAgent: 'test' }

/** Every text of a value, keys and all: what "shows" means here. */
const shown = (value: unknown) => JSON.stringify(value)

describe('a channel type added in a fixture shows its secret nowhere, through its one declaration', () => {
  const config = { name: 'ops', webhookUrl: WEBHOOK_URL }
  const payload = discordKind.schema.parse({ config }) as Record<string, unknown>

  it('masking on read: the URL is answered as its scheme and host', () => {
    const read = blankAlertChannelSecrets('DISCORD', config, withDiscord.secrets)
    expect(read).toEqual({ name: 'ops', webhookUrl: 'https://discord.example/********' })
    // a type the table does not hold shows none of its configuration (it may all be secret)
    expect(blankAlertChannelSecrets('DISCORD', config)).toEqual({})
  })

  it('the plan: the URL is `(secret)`, the lock fingerprints it, and a masked read compares equal', () => {
    expect(discordKind.secrets.arrays).toEqual(['config.webhookUrl'])
    const masked = maskSecretsOf(discordKind.secrets, payload) as { config: Record<string, unknown> }
    expect(masked.config.webhookUrl).toBe(SECRET_MASK)
    expect(shown(masked)).not.toContain(TOKEN)
    const blanked = discordKind.blankedSecrets?.(payload)
    expect(blanked?.paths).toEqual(['config.webhookUrl'])
    // what the service answers (masked) is the code's channel once both are normalized: no change planned
    const remote = { ...blankAlertChannelPayload(payload, withDiscord.secrets), subscriptions: [] }
    expect(discordKind.normalize?.(remote)).toEqual(discordKind.normalize?.(payload))
    expect(shown(discordKind.normalize?.(payload))).not.toContain(TOKEN)
  })

  it('import: the masked URL is read from the environment, not written as the masked value', () => {
    const remote = discordKind.normalize?.({ id: 7, type: 'DISCORD', config: { name: 'ops', webhookUrl: 'https://discord.example/********' } }) as Record<
      string,
      unknown
    >
    expect(secretSites('discord-alert-channel' as ResourceKind, 'chat', remote, new Set(), discordKind)).toMatchObject([
      { name: 'CHAT_WEBHOOKURL', field: 'config.webhookUrl', steps: ['config', 'webhookUrl'] },
    ])
  })

  it("deliveries: the channel as they show it, a refusal's message and an attempt's error never hold the URL or its path", async () => {
    const described = describeChannel('DISCORD', config, withDiscord)
    expect(described.shown).toMatchObject({ name: 'ops' })
    for (const text of [described.label, shown(described.shown)]) {
      expect(text).not.toContain(TOKEN)
      expect(text).not.toContain('/api/webhooks/1234567')
    }
    const attempt = await send(delivery('DISCORD', config), 1, context, withDiscord)
    expect(attempt).toMatchObject({ delivered: false, statusCode: 404, error: expect.stringContaining('HTTP 404: no webhook at') })
    expect(attempt.error).not.toContain(TOKEN)
    const refused = await send(delivery('DISCORD', { webhookUrl: WEBHOOK_URL }), 1, context, withDiscord)
    expect(refused.error).toContain('name')
    expect(refused.error).not.toContain(TOKEN)
    // unknown to the server: nothing of it shown
    expect(describeChannel('DISCORD', config, CHANNEL_TYPES)).toEqual({ label: 'DISCORD channel', shown: {} })
  })
})

describe('every channel type of the service keeps the secrets of its sample out of answers, plans and deliveries', () => {
  const kindOf = (type: AlertChannelKind): ResourceDescriptor =>
    Object.values(DESCRIPTORS).find((d) => d.list.collection === 'alert-channels' && 'where' in d.list && d.list.where?.equals === type) as ResourceDescriptor

  it.each(ALERT_CHANNEL_TYPES.map((type) => [type]))('%s', (type) => {
    const config: Record<string, unknown> = CHANNEL_SAMPLES[type]
    const secrets = Object.keys(ALERT_CHANNEL_SECRETS[type])
    expect(kindOf(type).secrets.arrays).toEqual(secrets.map((field) => `config.${field}`))
    const payload = kindOf(type).schema.parse(kindOf(type).codeShape?.toPayload(config) ?? {}) as Record<string, unknown>
    const holdsSecret = shown(config).includes('SECRET')
    expect(alertChannelSecretValues(payload) !== undefined, 'the declaration names the fields the sample holds secrets in').toBe(holdsSecret)
    expect(shown(blankAlertChannelSecrets(type, config))).not.toContain('SECRET')
    expect(shown(normalize(kindOf(type).kind, payload))).not.toContain('SECRET')
    expect(shown(maskSecrets(kindOf(type).kind, payload))).not.toContain('SECRET')
    expect(shown(describeChannel(type, config))).not.toContain('SECRET')
  })
})
