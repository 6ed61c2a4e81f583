/**
 * Secrets that must never reach output, logs, errors or debug traces: the API key above all.
 * The client registers its key here; the CLI masks every message and stack it prints with
 * `redact()`. A key shows as its first four characters and an ellipsis, enough to tell two
 * keys apart and useless to anyone reading a CI log.
 */
const secrets = new Set<string>()

/** Shortest value worth masking: shorter ones would mask ordinary words. */
const MIN_LENGTH = 6

export function addSecret(value: string | undefined): void {
  if (value && value.length >= MIN_LENGTH) secrets.add(value)
}

export function maskSecret(value: string): string {
  return `${value.slice(0, 4)}…`
}

/** The text with every registered secret (and its URL-encoded form) masked. */
export function redact(text: string): string {
  let out = text
  for (const secret of secrets) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      if (out.includes(form)) out = out.split(form).join(maskSecret(secret))
    }
  }
  return out
}

/** Masks user info (`https://user:key@host`) in a URL before it is shown. */
export function redactUrl(url: string): string {
  return redact(url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1***@'))
}
