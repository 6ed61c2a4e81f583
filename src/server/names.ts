import { hostname } from 'node:os'
import { isIP } from 'node:net'
import { domainKey } from './store/index.js'

/*
 * The server's own names: the host names its API and dashboard are reached under. No status
 * page may take one as its customDomain (409), and a request to one of them is never answered
 * with a custom-domain page, whatever the database holds: an account cannot take over the
 * dashboard's `/` for everybody.
 *
 * They are: `localhost` and every name under `.localhost` (RFC 6761), this machine's host name,
 * the address given to listen on when it is a name (`--host`), and the host of every public URL
 * the server is given (`--public-url`: the names a balancer or a proxy serves it under).
 * IP addresses need no listing: a customDomain is never an IP address (the schema refuses one).
 */
export interface ServerNames {
  /** whether this host name (any case, with or without a trailing dot) is the server's own */
  has(name: string): boolean
  /** the names, lower case (for messages and the log) */
  readonly list: readonly string[]
}

export function serverNames(options: { host?: string; publicUrls?: readonly string[] } = {}): ServerNames {
  const names = new Set<string>(['localhost'])
  const add = (name: string | undefined) => {
    const key = domainKey(name)
    if (key && !isIP(key.replace(/^\[|\]$/g, ''))) names.add(key)
  }
  add(hostname())
  add(options.host)
  for (const url of options.publicUrls ?? []) add(new URL(url).hostname)
  return {
    has: (name) => {
      const key = domainKey(name)
      return key !== null && (names.has(key) || key.endsWith('.localhost'))
    },
    list: [...names],
  }
}

/** A public URL as `--public-url` takes it: http(s), a host, nothing after the path; else the reason. */
export function publicUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `must be a URL such as https://monitors.example.com, got "${value}"`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must start with https:// or http://, got ${url.protocol}//`
  if (!url.hostname) return 'names no host'
  return undefined
}
