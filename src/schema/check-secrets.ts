/**
 * The secret values of a check, which the service stores (runs and alerts need them) but never
 * answers in clear (docs/security.md):
 * - the value of every `environmentVariables` item marked `secret` (any check type);
 * - the value of every webhook header and query parameter marked `secret`;
 * - the URL of a Slack incoming webhook (its path is the token): answered as its scheme and host
 *   followed by `/********`, so that the answer is still a valid URL;
 * - an API check's basic auth password and the values of its headers and query parameters
 *   marked `secret` (see blankApiSecrets).
 * Everything else is answered as stored. The same functions normalize both sides of a plan, so a
 * masked secret compares equal, and give the text the lock fingerprints to tell a change.
 */
import { apiSecretValues, blankApiSecrets } from './api-check.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What a Slack URL's path and query are answered as. */
export const MASKED_URL_PATH = '/********'

/** A Slack URL as answered: its scheme and host, the rest masked. */
export function maskUrl(url: unknown): string {
  try {
    const parsed = new URL(String(url))
    return `${parsed.protocol}//${parsed.host}${MASKED_URL_PATH}`
  } catch {
    return MASKED_URL_PATH.slice(1)
  }
}

function hasSecretItem(list: unknown): list is unknown[] {
  return Array.isArray(list) && list.some((v) => isObject(v) && v.secret === true && v.value !== '')
}

function blankItems(list: unknown[]): unknown[] {
  return list.map((v) => (isObject(v) && v.secret === true ? { ...v, value: '' } : v))
}

/** The check's alert channels with their secrets masked, or the same object when it holds none. */
function blankChannels(channels: unknown): unknown {
  if (!isObject(channels)) return channels
  let out = channels
  const webhooks = channels.webhook
  if (Array.isArray(webhooks) && webhooks.some((w) => isObject(w) && (hasSecretItem(w.headers) || hasSecretItem(w.queryParameters)))) {
    out = {
      ...out,
      webhook: webhooks.map((w) => {
        if (!isObject(w)) return w
        const copy = { ...w }
        if (Array.isArray(w.headers)) copy.headers = blankItems(w.headers)
        if (Array.isArray(w.queryParameters)) copy.queryParameters = blankItems(w.queryParameters)
        return copy
      }),
    }
  }
  const slack = channels.slack
  if (Array.isArray(slack) && slack.some((s) => isObject(s) && typeof s.url === 'string' && s.url !== maskUrl(s.url))) {
    out = { ...out, slack: slack.map((s) => (isObject(s) && typeof s.url === 'string' ? { ...s, url: maskUrl(s.url) } : s)) }
  }
  return out
}

/**
 * A check as reads answer it: every secret value masked (see the module comment). Returns the
 * same object when there is nothing to mask, a copy otherwise; `keepRequest` leaves an API
 * check's request secrets in (what an agent needs to run it).
 */
export function blankCheckSecrets<T>(check: T, options: { keepRequest?: boolean } = {}): T {
  if (!isObject(check)) return check
  let out: Record<string, unknown> = check
  if (hasSecretItem(check.environmentVariables)) out = { ...out, environmentVariables: blankItems(check.environmentVariables) }
  const channels = blankChannels(check.alertChannels)
  if (channels !== check.alertChannels) out = { ...out, alertChannels: channels }
  if (!options.keepRequest && isObject(check.request)) {
    const request = check.request
    const secretRequest =
      hasSecretItem(request.headers) || hasSecretItem(request.queryParameters) || (isObject(request.basicAuth) && request.basicAuth.password !== '')
    if (secretRequest) out = blankApiSecrets(out)
  }
  return out as T
}

/**
 * The secret values of a check that reads mask (see blankCheckSecrets): their paths (as plans
 * name them) and one canonical text of paths and values, or undefined when none is set. An
 * empty value (e.g. read from an unset environment variable) counts as not set. For an API
 * check with only request secrets, the text is the one earlier versions fingerprinted.
 */
export function checkSecretValues(check: Record<string, unknown>): { text: string; paths: string[] } | undefined {
  const pairs: Array<[string, string]> = []
  const api = apiSecretValues(check)
  if (api) pairs.push(...(JSON.parse(api.text) as Array<[string, string]>))
  const items = (list: unknown, at: string) => {
    if (!Array.isArray(list)) return
    for (const v of list) {
      if (isObject(v) && v.secret === true && typeof v.value === 'string' && v.value !== '') pairs.push([`${at}[${String(v.key)}].value`, v.value])
    }
  }
  items(check.environmentVariables, 'environmentVariables')
  const channels = check.alertChannels
  if (isObject(channels)) {
    if (Array.isArray(channels.webhook)) {
      for (const w of channels.webhook) {
        if (!isObject(w)) continue
        items(w.headers, `alertChannels.webhook[${String(w.name)}].headers`)
        items(w.queryParameters, `alertChannels.webhook[${String(w.name)}].queryParameters`)
      }
    }
    if (Array.isArray(channels.slack)) {
      channels.slack.forEach((s, i) => {
        if (isObject(s) && typeof s.url === 'string' && s.url !== '') pairs.push([`alertChannels.slack[${i}].url`, s.url])
      })
    }
  }
  if (pairs.length === 0) return undefined
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { text: JSON.stringify(pairs), paths: pairs.map(([path]) => path) }
}
