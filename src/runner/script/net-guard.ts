/**
 * The private-target policy inside a script's own process (API checks' setup and teardown
 * scripts, browser and multi-step checks): the source of `guard(g)`, which replaces
 * net.Socket's `connect`, dgram's `send` / `connect` and the resolvers' `setServers` so that
 * every address is checked as targets.ts checks the probes' (the ranges and the exceptions are
 * handed in as data). Plain JavaScript, run in the child before anything of the script.
 */
import { NON_PUBLIC_RANGES, type TargetPolicy } from '../targets.js'

/** What the scripts' process needs to refuse non-public addresses itself (targets.ts's ranges, the exceptions). */
export interface TargetGuard {
  v4: ReadonlyArray<readonly [string, number, string]>
  v6: ReadonlyArray<readonly [string, number, string]>
  /** `allowedTargets`: address, CIDR range, or address:port */
  allowed: readonly string[]
}

/** The guard of a policy: null for `allow` (nothing to check). `extra` are exceptions of the run itself (its browser's endpoint). */
export function targetGuard(policy: TargetPolicy | undefined, extra: readonly string[] = []): TargetGuard | null {
  return policy?.privateTargets === 'deny' ? { ...NON_PUBLIC_RANGES, allowed: [...(policy.allowedTargets ?? []), ...extra] } : null
}

/** `guard(g)` and its helpers, as source (no template characters: it is interpolated into harnesses). */
export const NET_GUARD_SOURCE = String.raw`let guarded = false
// the private-target policy on every TCP connection the scripts open (http, https, fetch, net,
// tls all connect through net.Socket): an IP address is checked before the socket connects, a
// name's every address by the lookup the socket uses; local (unix) sockets are refused; the
// patched method cannot be replaced
function guard(g) {
  if (!g || guarded) return
  guarded = true
  const net = require('node:net')
  const lists = []
  for (const [family, ranges] of [['ipv4', g.v4], ['ipv6', g.v6]]) {
    for (const [address, prefix, what] of ranges) { const l = new net.BlockList(); l.addSubnet(address, prefix, family); lists.push([l, family, what]) }
  }
  const own = new Set()
  for (const list of Object.values(require('node:os').networkInterfaces())) for (const i of list || []) own.add(i.address.toLowerCase().replace(/%.*$/, ''))
  const allowed = g.allowed.map((text) => {
    let host = text.trim()
    let port = null
    const b = /^\[([^\]]+)\](?::(\d+))?$/.exec(host)
    const p = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(host)
    if (b) { host = b[1]; port = b[2] === undefined ? null : Number(b[2]) } else if (p) { host = p[1]; port = Number(p[2]) }
    const [address, prefix] = host.split('/')
    const family = net.isIP(address) === 6 ? 'ipv6' : 'ipv4'
    const l = new net.BlockList()
    if (prefix === undefined) l.addAddress(address, family); else l.addSubnet(address, Number(prefix), family)
    return { l, port }
  })
  const refusal = (address, port) => {
    let bare = String(address || '').replace(/%.*$/, '').toLowerCase()
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)
    if (mapped) bare = mapped[1]
    const family = net.isIP(bare) === 6 ? 'ipv6' : net.isIP(bare) === 4 ? 'ipv4' : null
    if (!family) return 'an address that cannot be read'
    if (allowed.some((a) => (a.port === null || a.port === port) && a.l.check(bare, family))) return null
    for (const [l, f, what] of lists) if (f === family && l.check(bare, f)) return what
    if (bare === '255.255.255.255') return 'broadcast address'
    if (own.has(bare)) return 'address of this server'
    return null
  }
  const refused = (address, port, why) => {
    const error = new Error('connection to ' + address + ':' + port + ' refused by the private-target policy (--private-targets deny): ' + why)
    error.code = 'ERR_TARGET_REFUSED'
    return error
  }
  const dnsLookup = require('node:dns').lookup
  const original = net.Socket.prototype.connect
  Object.defineProperty(net.Socket.prototype, 'connect', {
    value: function connect(...args) {
      // net.connect() passes its normalized [options, callback]; a socket's own connect(options | port, host)
      let opts = Array.isArray(args[0]) ? args[0][0] : args[0]
      if (opts === null || typeof opts !== 'object') {
        opts = { port: Number(args[0]), host: typeof args[1] === 'string' ? args[1] : 'localhost' }
        args = [opts, ...args.slice(1).filter((a) => typeof a === 'function')]
      }
      const port = Number(opts.port)
      // a pipe when path is set (net's own test): http's agents pass path: null for a TCP connection
      if (opts.path) {
        process.nextTick(() => this.destroy(refused(opts.path, 'unix', 'a local socket')))
        return this
      }
      const host = opts.host || 'localhost'
      if (net.isIP(host)) {
        const why = refusal(host, port)
        if (why) {
          process.nextTick(() => this.destroy(refused(host, port, why)))
          return this
        }
      } else {
        // every address the name resolves to is checked before the socket connects to one
        const lookup = typeof opts.lookup === 'function' ? opts.lookup : dnsLookup
        opts.lookup = (hostname, options, callback) => lookup(hostname, options, (error, address, family) => {
          if (error) return callback(error)
          const list = Array.isArray(address) ? address : [{ address, family }]
          for (const a of list) {
            const why = refusal(a.address, port)
            if (why) return callback(refused(a.address, port, why))
          }
          callback(null, address, family)
        })
      }
      return original.apply(this, args)
    },
    writable: false,
    configurable: false,
  })
  guardUdp(refusal, refused, dnsLookup)
}
// UDP follows the same policy: a datagram's destination (send, or connect of a socket) is checked
// before it leaves, a name's every address first resolved; and a DNS server a script names
// (dns.setServers, a Resolver's setServers) is checked as it is set, since c-ares queries it
// over UDP outside dgram. The system's own resolvers are left as they are (names are looked up
// through them for every connection).
function guardUdp(refusal, refused, dnsLookup) {
  const dgram = require('node:dgram')
  const net = require('node:net')
  const check = (host, port, done) => {
    const target = host === undefined || host === null || typeof host === 'function' ? '127.0.0.1' : String(host)
    if (net.isIP(target)) {
      const why = refusal(target, port)
      return done(why ? refused(target, port, why) : null, target)
    }
    dnsLookup(target, { all: true }, (error, list) => {
      if (error) return done(error)
      for (const a of list) {
        const why = refusal(a.address, port)
        if (why) return done(refused(a.address, port, why))
      }
      done(null, list[0].address)
    })
  }
  const fail = (socket, callback, error) => process.nextTick(() => (typeof callback === 'function' ? callback(error) : socket.emit('error', error)))
  const send = dgram.Socket.prototype.send
  Object.defineProperty(dgram.Socket.prototype, 'send', {
    value: function (...args) {
      // send(msg, [offset, length,] port, [address,] [callback]); a connected socket: send(msg, [offset, length,] [callback])
      const at = typeof args[1] === 'number' && typeof args[2] === 'number' && typeof args[3] === 'number' ? 3 : typeof args[1] === 'number' && typeof args[2] !== 'number' ? 1 : -1
      if (at < 0) return send.apply(this, args)
      const callback = args.find((a) => typeof a === 'function')
      const host = typeof args[at + 1] === 'string' ? args[at + 1] : undefined
      check(host, Number(args[at]), (error, address) => {
        if (error) return fail(this, callback, error)
        const rest = args.slice(0, at + 1)
        send.apply(this, [...rest, address, ...(callback ? [callback] : [])])
      })
    },
    writable: false,
    configurable: false,
  })
  const connect = dgram.Socket.prototype.connect
  Object.defineProperty(dgram.Socket.prototype, 'connect', {
    value: function (port, host, callback) {
      const done = typeof host === 'function' ? host : callback
      check(typeof host === 'string' ? host : undefined, Number(port), (error, address) => {
        if (error) return fail(this, undefined, error)
        connect.call(this, port, address, done)
      })
    },
    writable: false,
    configurable: false,
  })
  const dns = require('node:dns')
  const base = Object.getPrototypeOf(dns.Resolver.prototype)
  const owner = Object.prototype.hasOwnProperty.call(base, 'setServers') ? base : dns.Resolver.prototype
  const setServers = owner.setServers
  Object.defineProperty(owner, 'setServers', {
    value: function (servers) {
      for (const server of Array.isArray(servers) ? servers : []) {
        const text = String(server)
        const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) || /^(\d+\.\d+\.\d+\.\d+)(?::(\d+))?$/.exec(text) || [text, text, undefined]
        const port = m[2] === undefined ? 53 : Number(m[2])
        const why = refusal(m[1], port)
        if (why) throw refused(m[1], port, why)
      }
      return setServers.call(this, servers)
    },
    writable: false,
    configurable: false,
  })
}
`

/** A preload (`node --require`) that installs the guard before any other code of the process runs. */
export function guardPreload(g: TargetGuard): string {
  return `'use strict'\n${NET_GUARD_SOURCE}\nguard(${JSON.stringify(g)})\n`
}
