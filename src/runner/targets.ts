/**
 * The private-target policy: which addresses a probe (API, DNS, ICMP) or an alert delivery
 * (webhook, Slack) may connect to. With `deny`, loopback, private, link-local (the cloud
 * metadata address 169.254.169.254 among them), unique-local and other non-public ranges, and
 * the addresses of this machine's own interfaces are refused. The check is made on the address
 * a connection is actually opened to: every address a host name resolves to is checked by the
 * lookup the socket uses, an IP literal before the socket is opened, and the socket's remote
 * address once it is connected; so a name that resolves to 127.0.0.1 (or another answer on a
 * second lookup: DNS rebinding) is refused as the literal is. Numeric forms (`2130706433`,
 * `0x7f.1`, `0177.0.0.1`) are resolved by the URL parser or getaddrinfo to the dotted address
 * before they are checked; IPv4-mapped, NAT64 and 6to4 IPv6 addresses are checked by the IPv4
 * address they carry.
 *
 * Used by the runner (every check type) and by the server's alert senders.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { buildConnector } from 'undici'

/** `allow`: any address; `deny`: public addresses only (see the module comment). */
export type PrivateTargets = 'allow' | 'deny'
export const PRIVATE_TARGETS = ['allow', 'deny'] as const

/** The flag that sets the policy, named in every refusal. */
const POLICY_NAME = 'the private-target policy (--private-targets deny)'

/** Raised (or handed to a socket's callback) when the policy refuses an address. */
export class TargetRefused extends Error {
  readonly code = 'ERR_TARGET_REFUSED'
  constructor(message: string) {
    super(message)
  }
}

/** The refusal of the policy an error is, or was caused by; undefined for any other error. */
export function refusalIn(error: unknown): Error | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof TargetRefused || e.code === 'ERR_TARGET_REFUSED') return e as Error
  }
  return undefined
}

const V4_RANGES: Array<[string, number, string]> = [
  ['0.0.0.0', 8, '"this network" address (0.0.0.0/8)'],
  ['10.0.0.0', 8, 'private address (10.0.0.0/8)'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT) address (100.64.0.0/10)'],
  ['127.0.0.0', 8, 'loopback address (127.0.0.0/8)'],
  ['169.254.0.0', 16, 'link-local address (169.254.0.0/16, cloud metadata among them)'],
  ['172.16.0.0', 12, 'private address (172.16.0.0/12)'],
  ['192.0.0.0', 24, 'reserved address (192.0.0.0/24)'],
  ['192.168.0.0', 16, 'private address (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'benchmarking address (198.18.0.0/15)'],
  ['224.0.0.0', 4, 'multicast address (224.0.0.0/4)'],
  ['240.0.0.0', 4, 'reserved address (240.0.0.0/4)'],
]

const V6_RANGES: Array<[string, number, string]> = [
  ['::', 96, 'loopback, unspecified or IPv4-compatible address (::/96)'],
  ['64:ff9b:1::', 48, 'local NAT64 address (64:ff9b:1::/48)'],
  ['100::', 64, 'discard address (100::/64)'],
  ['2001::', 32, 'Teredo address (2001::/32)'],
  ['fc00::', 7, 'unique-local address (fc00::/7)'],
  ['fe80::', 10, 'link-local address (fe80::/10)'],
  ['fec0::', 10, 'site-local address (fec0::/10)'],
  ['ff00::', 8, 'multicast address (ff00::/8)'],
]

/** The ranges `deny` refuses, as data (for a process that checks them itself: the scripts' sandbox). */
export const NON_PUBLIC_RANGES: { v4: ReadonlyArray<readonly [string, number, string]>; v6: ReadonlyArray<readonly [string, number, string]> } = {
  v4: V4_RANGES,
  v6: V6_RANGES,
}

function blockList(ranges: Array<[string, number, string]>, family: 'ipv4' | 'ipv6'): Array<[BlockList, string]> {
  return ranges.map(([net, prefix, what]) => {
    const list = new BlockList()
    list.addSubnet(net, prefix, family)
    return [list, what]
  })
}

const V4 = blockList(V4_RANGES, 'ipv4')
const V6 = blockList(V6_RANGES, 'ipv6')

/** The 8 groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part as two groups). */
function groupsOf(address: string): number[] | null {
  let text = address.replace(/%.*$/, '')
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const parts = dotted[1].split('.').map(Number)
    text = `${text.slice(0, -dotted[1].length)}${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`
  }
  const [head, tail, ...more] = text.split('::')
  if (more.length > 0) return null
  const left = head ? head.split(':') : []
  const right = tail !== undefined ? (tail ? tail.split(':') : []) : []
  const missing = 8 - left.length - right.length
  if (tail === undefined ? missing !== 0 : missing < 1) return null
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) => Number.parseInt(g, 16))
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null
}

function v4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16), or null. */
function embeddedV4(groups: number[]): string | null {
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0)
  if (zero(0, 5) && groups[5] === 0xffff) return v4Of(groups[6], groups[7])
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4Of(groups[6], groups[7])
  if (groups[0] === 0x2002) return v4Of(groups[1], groups[2])
  return null
}

/** The addresses of this machine's interfaces (its own addresses), lower case, without zone. */
export function ownAddresses(): Set<string> {
  const out = new Set<string>()
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) out.add(info.address.toLowerCase().replace(/%.*$/, ''))
  }
  return out
}

/**
 * Why `deny` refuses an address (what kind of address it is), or null for a public address.
 * Anything that is not an IP address is refused (it cannot be checked).
 */
export function nonPublicAddress(address: string): string | null {
  const bare = address
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '')
    .toLowerCase()
  const family = isIP(bare)
  if (family === 4) {
    for (const [list, what] of V4) if (list.check(bare, 'ipv4')) return what
    if (bare === '255.255.255.255') return 'broadcast address'
  } else if (family === 6) {
    const groups = groupsOf(bare)
    if (!groups) return 'IPv6 address that cannot be read'
    const v4 = embeddedV4(groups)
    if (v4 !== null) {
      const inner = nonPublicAddress(v4)
      if (inner) return `${inner.replace(/ \(.*\)$/, '')} (${v4}) inside an IPv6 address`
      if (ownAddresses().has(v4)) return `address of this server (${v4}) inside an IPv6 address`
    } else {
      for (const [list, what] of V6) if (list.check(bare, 'ipv6')) return what
    }
  } else {
    return 'name that is not an IP address'
  }
  if (ownAddresses().has(bare)) return 'address of this server'
  return null
}

/**
 * What decides whether a target may be reached: the policy, and the exceptions to `deny`
 * (`allowedTargets`: an address, a CIDR range, or an address with a port such as
 * `10.0.0.5:8080` or `[fd00::5]:443`). RunOptions and the alert worker's options have this shape.
 */
export interface TargetPolicy {
  privateTargets?: PrivateTargets
  allowedTargets?: readonly string[]
}

interface AllowedTarget {
  list: BlockList
  port: number | null
}

/** One `allowedTargets` entry, read; throws an Error saying what is allowed when it is none of them. */
export function parseAllowedTarget(text: string): AllowedTarget {
  const entry = text.trim()
  const wrong = () => new Error(`"${text}" is not an address, a CIDR range or an address:port (e.g. 10.0.0.5, 10.0.0.0/24, 10.0.0.5:8080, [fd00::5]:443)`)
  let host = entry
  let port: number | null = null
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  const v4Port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(entry)
  if (bracketed) [host, port] = [bracketed[1], bracketed[2] !== undefined ? Number(bracketed[2]) : null]
  else if (v4Port) [host, port] = [v4Port[1], Number(v4Port[2])]
  if (port !== null && !(port >= 1 && port <= 65535)) throw wrong()
  const [address, prefixText, ...rest] = host.split('/')
  const family = isIP(address)
  if (!family || rest.length > 0 || (prefixText !== undefined && port !== null)) throw wrong()
  const list = new BlockList()
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (prefixText === undefined) list.addAddress(address, type)
  else {
    const prefix = Number(prefixText)
    if (!/^\d+$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) throw wrong()
    list.addSubnet(address, prefix, type)
  }
  return { list, port }
}

const parsedAllowed = new WeakMap<readonly string[], AllowedTarget[]>()

function isAllowed(policy: TargetPolicy, address: string, port: number | null): boolean {
  const entries = policy.allowedTargets
  if (!entries || entries.length === 0) return false
  let parsed = parsedAllowed.get(entries)
  if (!parsed) parsedAllowed.set(entries, (parsed = entries.map(parseAllowedTarget)))
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '')
  const type = isIP(bare) === 6 ? 'ipv6' : 'ipv4'
  return parsed.some((a) => (a.port === null || a.port === port) && a.list.check(bare, type))
}

/**
 * The refusal text for a target, or null when the policy lets it through. `host` is what the
 * check names (a host name or an IP literal), `address` what it resolved to, `port` the port
 * connected to (null for ICMP). The resolved address of a host name is not shown (only its
 * kind): the refusal tells nothing of the server's network beyond that.
 */
export function refusal(policy: TargetPolicy | undefined, host: string, address: string, port: number | null): string | null {
  if (policy?.privateTargets !== 'deny') return null
  const what = nonPublicAddress(address)
  if (!what || isAllowed(policy, address, port)) return null
  const bareHost = host.replace(/^\[(.*)\]$/, '$1')
  const literal = isIP(bareHost) !== 0
  const article = /^[aeiou"]/i.test(what) ? 'an' : 'a'
  return literal ? `${host} is ${article} ${what}: refused by ${POLICY_NAME}` : `${host} resolves to ${article} ${what}: refused by ${POLICY_NAME}`
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net.connect / tls.connect that resolves as node does and refuses when any of
 * the addresses is refused by the policy: the socket then connects only to checked addresses.
 */
export function guardedLookup(policy: TargetPolicy | undefined, port: number | null) {
  return (hostname: string, options: { family?: number | string; all?: boolean; hints?: number }, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0)
    dnsLookup(hostname, { family: family === 4 || family === 6 ? family : 0, hints: options.hints, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '')
      for (const { address } of addresses) {
        const refused = refusal(policy, hostname, address, port)
        if (refused) return callback(new TargetRefused(refused), options.all ? [] : '')
      }
      if (options.all) return callback(null, addresses)
      const [first] = addresses
      callback(null, first.address, first.family)
    })
  }
}

/** Refusal of an IP literal host before a socket is opened (node does no lookup for one), or null. */
export function literalRefusal(policy: TargetPolicy | undefined, host: string, port: number | null): string | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  return isIP(bare) ? refusal(policy, host, bare, port) : null
}

/**
 * Checks the address a socket actually connected to (its remote address), once connected:
 * destroys it with a TargetRefused error when the policy refuses it. Returns the refusal text.
 */
export function connectedRefusal(policy: TargetPolicy | undefined, host: string, socket: Socket): string | null {
  if (policy?.privateTargets !== 'deny') return null
  const remote = socket.remoteAddress
  const refused = remote ? refusal(policy, host, remote, socket.remotePort ?? null) : `${host}: the connected address is unknown: refused by ${POLICY_NAME}`
  if (refused) socket.destroy(new TargetRefused(refused))
  return refused
}

/**
 * An undici connector (for an Agent or Client `connect` option) that applies the policy: IP
 * literals before connecting, host names through `guardedLookup`, and the connected address.
 */
export function guardedConnector(policy: TargetPolicy | undefined, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  if (policy?.privateTargets !== 'deny') return buildConnector(options)
  // one connector per port (the lookup checks exceptions by port), kept for its TLS sessions
  const byPort = new Map<number, buildConnector.connector>()
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80)
    const refused = literalRefusal(policy, opts.hostname, port)
    if (refused) return callback(new TargetRefused(refused), null)
    let base = byPort.get(port)
    if (!base) byPort.set(port, (base = buildConnector({ ...options, lookup: guardedLookup(policy, port) } as buildConnector.BuildOptions)))
    base(opts, (error, socket) => {
      if (error) return callback(error, null)
      const after = connectedRefusal(policy, opts.hostname, socket as Socket)
      if (after) return callback(new TargetRefused(after), null)
      callback(null, socket as Socket)
    })
  }
}

/**
 * Resolves a host (a name or an IP literal) for a probe that connects by address (a DNS name
 * server, an ICMP host) and checks every address against the policy. The probe then talks to
 * `address`, never to the name again, so a second answer cannot slip through.
 */
export async function resolveTarget(
  policy: TargetPolicy | undefined,
  host: string,
  port: number | null,
  family: 0 | 4 | 6 = 0,
): Promise<{ address: string; refused?: undefined } | { refused: string; address?: undefined }> {
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  const addresses = isIP(bare)
    ? [{ address: bare }]
    : await new Promise<LookupAddress[]>((resolve, reject) => {
        dnsLookup(bare, { family, all: true }, (error, found) => (error ? reject(error) : resolve(found)))
      })
  for (const { address } of addresses) {
    const refused = refusal(policy, host, address, port)
    if (refused) return { refused }
  }
  return { address: addresses[0].address }
}
