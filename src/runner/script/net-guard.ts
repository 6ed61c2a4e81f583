/**
 * The network inside a script's own process (API checks' setup and teardown scripts, browser and
 * multi-step checks), as source run in the child before anything of the script:
 *
 * - `guard(g, report)`, the private-target policy `deny` checked in the process, the second wall
 *   behind the run's network namespace (jail.ts): it replaces net.Socket's `connect`, dgram's
 *   `send` / `connect` and the resolvers' `setServers` (on the resolver's native handle, which
 *   every resolver and `dns.setServers` go through) so that every address is checked as
 *   targets.ts checks the probes' (the ranges, this server's own addresses and the exceptions
 *   are handed in as data). An address is read in every spelling (IPv4-mapped, NAT64 and 6to4
 *   IPv6 addresses are checked by the IPv4 address they carry), the options of a connection are
 *   read once into a frozen copy (what the socket connects to is what was checked), names are
 *   resolved by a lookup the script cannot replace, and every refusal is reported (`report`),
 *   so that a refusal the script catches still fails its run.
 * - `routeThrough(path, report)`: in a run's network namespace, which has no way out but the
 *   egress proxy on the unix socket `path`, the HTTP(S) clients of Node (`http`, `https`, the
 *   agents of the packages built on them, `fetch`) open each connection as a `CONNECT` tunnel
 *   through that proxy, which applies the policy (a refusal is a 403 naming it).
 *
 * Plain JavaScript, without template characters: it is interpolated into harnesses.
 */
import { NON_PUBLIC_RANGES, ownAddresses, type TargetPolicy } from '../targets.js'

/** What the scripts' process needs to refuse non-public addresses itself (targets.ts's ranges, the exceptions). */
export interface TargetGuard {
  v4: ReadonlyArray<readonly [string, number, string]>
  v6: ReadonlyArray<readonly [string, number, string]>
  /** `allowedTargets`: address, CIDR range, or address:port */
  allowed: readonly string[]
  /** This machine's own addresses (inside a network namespace the process sees none of them). */
  own: readonly string[]
}

/** The guard of a policy: null for `allow` (nothing to check). `extra` are exceptions of the run itself (its browser's endpoint, its bridges). */
export function targetGuard(policy: TargetPolicy | undefined, extra: readonly string[] = []): TargetGuard | null {
  return policy?.privateTargets === 'deny' ? { ...NON_PUBLIC_RANGES, allowed: [...(policy.allowedTargets ?? []), ...extra], own: [...ownAddresses()] } : null
}

/** `guard(g, report)`, `routeThrough(path, report)` and their helpers, as source. */
export const NET_GUARD_SOURCE = String.raw`let guarded = false
let targetCheck = null
const netOriginalConnect = require('node:net').Socket.prototype.connect
const netLookup = require('node:dns').lookup
// the 8 groups of an IPv6 address ('::' expanded, a trailing dotted IPv4 part as two groups), or null
function ipv6Groups(address) {
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const p = dotted[1].split('.').map(Number)
    text = text.slice(0, -dotted[1].length) + ((p[0] << 8) | p[1]).toString(16) + ':' + ((p[2] << 8) | p[3]).toString(16)
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const left = halves[0] ? halves[0].split(':') : []
  const right = halves.length === 2 ? (halves[1] ? halves[1].split(':') : []) : []
  const missing = 8 - left.length - right.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const groups = left.concat(new Array(halves.length === 1 ? 0 : missing).fill('0'), right).map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN))
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null
}
// the IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16), or null
function embeddedIpv4(g) {
  const zero = (from, to) => g.slice(from, to).every((x) => x === 0)
  const v4 = (hi, lo) => (hi >> 8) + '.' + (hi & 0xff) + '.' + (lo >> 8) + '.' + (lo & 0xff)
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7])
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7])
  if (g[0] === 0x2002) return v4(g[1], g[2])
  return null
}
function targetError(message) {
  const error = new Error(message)
  error.code = 'ERR_TARGET_REFUSED'
  return error
}
// why the policy refuses an address (in any spelling), as targets.ts's nonPublicAddress says it; null when it may be reached
function addressRefusal(g) {
  const net = require('node:net')
  const lists = []
  for (const [family, ranges] of [['ipv4', g.v4], ['ipv6', g.v6]]) {
    for (const [address, prefix, what] of ranges) { const l = new net.BlockList(); l.addSubnet(address, prefix, family); lists.push([l, family, what]) }
  }
  const own = new Set(g.own)
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
  const kind = (bare, family) => {
    for (const [l, f, what] of lists) if (f === family && l.check(bare, f)) return what
    if (bare === '255.255.255.255') return 'broadcast address'
    return null
  }
  return (address, port) => {
    const bare = String(address).replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '').toLowerCase()
    const version = net.isIP(bare)
    if (version === 0) return 'an address that cannot be read'
    const family = version === 6 ? 'ipv6' : 'ipv4'
    if (allowed.some((a) => (a.port === null || a.port === port) && a.l.check(bare, family))) return null
    if (version === 6) {
      const groups = ipv6Groups(bare)
      if (!groups) return 'IPv6 address that cannot be read'
      const v4 = embeddedIpv4(groups)
      if (v4 !== null) {
        const inner = kind(v4, 'ipv4')
        if (inner) return inner.replace(/ \(.*\)$/, '') + ' (' + v4 + ') inside an IPv6 address'
        if (own.has(v4)) return 'address of this server (' + v4 + ') inside an IPv6 address'
      } else {
        const what = kind(bare, 'ipv6')
        if (what) return what
      }
    } else {
      const what = kind(bare, 'ipv4')
      if (what) return what
    }
    if (own.has(bare)) return 'address of this server'
    return null
  }
}
// the private-target policy on every TCP connection the scripts open (http, https, fetch, net,
// tls all connect through net.Socket), every UDP datagram and every DNS server they name
function guard(g, report) {
  if (!g || guarded) return
  guarded = true
  const net = require('node:net')
  const refusal = addressRefusal(g)
  const refused = (address, port, why) => {
    const message = 'connection to ' + address + ':' + port + ' refused by the private-target policy (--private-targets deny): ' + why
    try { report(message) } catch (e) { /* the run's channel is gone */ }
    return targetError(message)
  }
  targetCheck = (host, port) => {
    const why = net.isIP(String(host).replace(/^\[(.*)\]$/, '$1')) ? refusal(host, port) : null
    return why ? refused(host, port, why) : null
  }
  // every address a name resolves to, checked, by Node's own lookup as it was before the script ran
  const checkedLookup = (port) => (hostname, options, callback) => netLookup(hostname, options, (error, address, family) => {
    if (error) return callback(error)
    const list = Array.isArray(address) ? address : [{ address, family }]
    for (const a of list) {
      const why = refusal(a.address, port)
      if (why) return callback(refused(a.address, port, why))
    }
    callback(null, address, family)
  })
  // what net's connect reads of its options: each read once, into a copy that cannot change
  const KEYS = ['port', 'host', 'path', 'family', 'hints', 'localAddress', 'localPort', 'timeout', 'noDelay', 'keepAlive', 'keepAliveInitialDelay',
    'allowHalfOpen', 'autoSelectFamily', 'autoSelectFamilyAttemptTimeout', 'onread', 'signal']
  const snapshot = (options) => {
    const copy = {}
    for (const key of KEYS) {
      const value = options[key]
      if (value !== undefined) copy[key] = value
    }
    return copy
  }
  Object.defineProperty(net.Socket.prototype, 'connect', {
    value: function connect(...args) {
      // net.connect() passes its normalized [options, callback]; a socket's own connect(options | path | port, host, callback)
      let options
      let callback = args.find((a) => typeof a === 'function')
      if (Array.isArray(args[0])) {
        options = args[0][0]
        callback = typeof args[0][1] === 'function' ? args[0][1] : undefined
      } else if (args[0] !== null && typeof args[0] === 'object') {
        options = args[0]
      } else if (typeof args[0] === 'string' && !/^\s*\d+\s*$/.test(args[0])) {
        options = { path: args[0] }
      } else {
        options = { port: args[0], host: typeof args[1] === 'string' ? args[1] : undefined }
      }
      const safe = snapshot(options !== null && typeof options === 'object' ? options : {})
      const port = Number(safe.port)
      if (safe.path) {
        const error = refused(String(safe.path), 'unix', 'a local socket')
        process.nextTick(() => this.destroy(error))
        return this
      }
      const host = safe.host || 'localhost'
      if (net.isIP(host)) {
        const why = refusal(host, port)
        if (why) {
          const error = refused(host, port, why)
          process.nextTick(() => this.destroy(error))
          return this
        }
      } else {
        safe.lookup = checkedLookup(port)
      }
      Object.freeze(safe)
      return callback ? netOriginalConnect.call(this, safe, callback) : netOriginalConnect.call(this, safe)
    },
    writable: false,
    configurable: false,
  })
  guardUdp(refusal, refused)
  guardResolvers(refusal, refused)
}
// UDP follows the same policy: a datagram's destination (send, or connect of a socket) is checked
// before it leaves, a name's every address first resolved
function guardUdp(refusal, refused) {
  const dgram = require('node:dgram')
  const net = require('node:net')
  const check = (host, port, done) => {
    const target = host === undefined || host === null || typeof host === 'function' ? '127.0.0.1' : String(host)
    if (net.isIP(target)) {
      const why = refusal(target, port)
      return done(why ? refused(target, port, why) : null, target)
    }
    netLookup(target, { all: true }, (error, list) => {
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
      const port = Number(args[at])
      check(host, port, (error, address) => {
        if (error) return fail(this, callback, error)
        send.apply(this, [...args.slice(0, at), port, address, ...(callback ? [callback] : [])])
      })
    },
    writable: false,
    configurable: false,
  })
  const connect = dgram.Socket.prototype.connect
  Object.defineProperty(dgram.Socket.prototype, 'connect', {
    value: function (port, host, callback) {
      const done = typeof host === 'function' ? host : callback
      const number = Number(port)
      check(typeof host === 'string' ? host : undefined, number, (error, address) => {
        if (error) return fail(this, undefined, error)
        connect.call(this, number, address, done)
      })
    },
    writable: false,
    configurable: false,
  })
}
// a DNS server a script names is a UDP target too, which c-ares queries outside dgram: checked on
// the resolvers' native handle, which dns.setServers, every Resolver's setServers (callback and
// promise API) and a script reaching into a resolver's handle all go through
function guardResolvers(refusal, refused) {
  const dns = require('node:dns')
  const handle = new dns.Resolver()._handle
  const owner = handle && Object.getPrototypeOf(handle)
  if (!owner || typeof owner.setServers !== 'function') return
  const setServers = owner.setServers
  const entries = (servers) => {
    if (Array.isArray(servers)) return servers.map((s) => (Array.isArray(s) ? [String(s[1]), Number(s[2]) || 53] : [String(s), 53]))
    return String(servers).split(',').filter((s) => s.trim() !== '').map((text) => {
      const m = /^\s*\[([^\]]+)\](?::(\d+))?\s*$/.exec(text) || /^\s*(\d+\.\d+\.\d+\.\d+)(?::(\d+))?\s*$/.exec(text) || [text, text.trim(), undefined]
      return [m[1], m[2] === undefined ? 53 : Number(m[2]) || 53]
    })
  }
  Object.defineProperty(owner, 'setServers', {
    value: function (servers) {
      for (const [address, port] of entries(servers)) {
        const why = refusal(address, port)
        if (why) throw refused(address, port, why)
      }
      return setServers.call(this, servers)
    },
    writable: false,
    configurable: false,
  })
}
// a file access the permission model refuses (ERR_ACCESS_DENIED), through any function of fs and
// fs.promises, is reported as it is thrown: a refusal the script catches still fails its run
function reportFileRefusals(report) {
  const fs = require('node:fs')
  const seen = (error) => {
    if (!error || error.code !== 'ERR_ACCESS_DENIED') return
    try { report([error.permission || 'FileSystem', error.resource].filter(Boolean).join(' ')) } catch (e) { /* the run's channel is gone */ }
  }
  const wrap = (owner, name) => {
    const original = owner[name]
    if (typeof original !== 'function' || /^[A-Z]/.test(name)) return
    const wrapper = function (...args) {
      try {
        const out = original.apply(this, args)
        if (out && typeof out.then === 'function') return out.then(undefined, (e) => { seen(e); throw e })
        return out
      } catch (e) {
        seen(e)
        throw e
      }
    }
    for (const k of Reflect.ownKeys(original)) if (k !== 'length' && k !== 'name' && k !== 'prototype') Object.defineProperty(wrapper, k, Object.getOwnPropertyDescriptor(original, k))
    Object.defineProperty(owner, name, { value: wrapper, writable: false, configurable: false, enumerable: true })
  }
  for (const name of Object.keys(fs)) if (name !== 'promises') wrap(fs, name)
  for (const name of Object.keys(fs.promises)) wrap(fs.promises, name)
}
// a CONNECT tunnel to host:port through the egress proxy on the unix socket path: callback(error, socket)
function egressTunnel(path, host, port, report, callback) {
  const net = require('node:net')
  const socket = new net.Socket()
  const target = (net.isIP(host) === 6 ? '[' + host + ']' : host) + ':' + port
  let head = Buffer.alloc(0)
  let settled = false
  const settle = (error) => {
    if (settled) return
    settled = true
    socket.removeListener('data', onData)
    if (error) {
      socket.destroy()
      return callback(error)
    }
    callback(null, socket)
  }
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0) {
      if (head.length > 16384) settle(new Error('the egress proxy answered no status'))
      return
    }
    const status = Number((/^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1')) || [])[1])
    if (status === 200) {
      socket.pause()
      const rest = head.subarray(end + 4)
      if (rest.length > 0) socket.unshift(rest)
      return settle(null)
    }
    // a refusal names its reason in the body, read to its end
    refusal = { status, body: head.subarray(end + 4).toString('utf8') }
    socket.removeListener('data', onData)
    socket.on('data', (more) => { refusal.body += more.toString('utf8') })
  }
  let refusal = null
  socket.on('data', onData)
  socket.once('error', (error) => settle(error))
  socket.once('close', () => {
    if (!refusal) return settle(new Error('the egress proxy closed the connection to ' + target))
    const reason = refusal.body.trim() || 'the egress proxy answered ' + refusal.status
    if (refusal.status !== 403) return settle(new Error(reason))
    try { report(reason) } catch (e) { /* the run's channel is gone */ }
    settle(targetError(reason))
  })
  netOriginalConnect.call(socket, { path }, () => socket.write('CONNECT ' + target + ' HTTP/1.1\r\nHost: ' + target + '\r\n\r\n'))
}
// a listener on 127.0.0.1:port of the run's own network that carries each connection to the unix
// socket path (the runner's egress proxy, the browser's filtering proxy): how clients that speak
// to a proxy by address (Playwright's) reach the runner from inside
function bridgeTo(port, path) {
  const net = require('node:net')
  const server = net.createServer((client) => {
    const up = new net.Socket()
    netOriginalConnect.call(up, { path })
    client.pipe(up)
    up.pipe(client)
    const end = () => { client.destroy(); up.destroy() }
    client.on('error', end)
    up.on('error', end)
    client.on('close', end)
    up.on('close', end)
  })
  server.listen(port, '127.0.0.1')
  server.unref()
}
// Node's HTTP(S) clients tunnel every connection through the egress proxy on path
function routeThrough(path, report) {
  const http = require('node:http')
  const https = require('node:https')
  const tls = require('node:tls')
  const net = require('node:net')
  const tunnel = (host, port, callback) => {
    const early = targetCheck ? targetCheck(host, port) : null
    if (early) return process.nextTick(() => callback(early))
    egressTunnel(path, host, port, report, callback)
  }
  const hostOf = (options) => String(options.hostname || options.host || 'localhost').replace(/^\[(.*)\]$/, '$1')
  Object.defineProperty(http.Agent.prototype, 'createConnection', {
    value: function createConnection(options, callback) {
      tunnel(hostOf(options), Number(options.port) || 80, callback)
    },
    writable: false,
    configurable: false,
  })
  Object.defineProperty(https.Agent.prototype, 'createConnection', {
    value: function createConnection(options, callback) {
      const host = hostOf(options)
      tunnel(host, Number(options.port) || 443, (error, socket) => {
        if (error) return callback(error)
        const servername = options.servername || (net.isIP(host) ? undefined : host)
        callback(null, tls.connect({ ...options, host, socket, servername }))
      })
    },
    writable: false,
    configurable: false,
  })
  // fetch: undici's global dispatcher, made (synchronously) by the first fetch, replaced then by
  // one that tunnels (on the first call: loading undici before a script fetches costs every run)
  const key = Symbol.for('undici.globalDispatcher.1')
  const fetchOf = globalThis.fetch
  let installed = false
  const install = () => {
    installed = true
    fetchOf('data:,').catch(() => undefined)
    const current = globalThis[key]
    if (!current) return
    const Agent = current.constructor
    const agent = new Agent({
      connect: (options, callback) => {
        const host = String(options.hostname).replace(/^\[(.*)\]$/, '$1')
        const secure = options.protocol === 'https:'
        tunnel(host, Number(options.port) || (secure ? 443 : 80), (error, socket) => {
          if (error) return callback(error, null)
          if (!secure) return callback(null, socket)
          const servername = options.servername || (net.isIP(host) ? undefined : host)
          const wrapped = tls.connect({ socket, servername, ALPNProtocols: ['http/1.1'] })
          wrapped.once('secureConnect', () => callback(null, wrapped))
          wrapped.once('error', (e) => callback(e, null))
        })
      },
    })
    Object.defineProperty(globalThis, key, { value: agent, writable: false, configurable: false, enumerable: false })
  }
  globalThis.fetch = function fetch(...args) {
    if (!installed) install()
    return fetchOf.apply(this, args)
  }
}
`

/**
 * A preload (`node --require`) that installs the guard (and, in a network of the run's own, the
 * route through the egress proxy on `egress` and the `bridges`, each `[port, unix socket]`)
 * before any other code of the process runs. What it refuses is sent to the parent as a
 * violation (when there is an IPC channel).
 */
export function guardPreload(g: TargetGuard | null, egress: string | null = null, bridges: ReadonlyArray<readonly [number, string]> = []): string {
  return [
    "'use strict'",
    NET_GUARD_SOURCE,
    "const reportRefusal = ((send) => (message) => { if (send) send({ t: 'violation', permission: 'Network', resource: message }) })(typeof process.send === 'function' ? process.send.bind(process) : null)",
    g ? `guard(${JSON.stringify(g)}, reportRefusal)` : '',
    // the containment's working directory is not one of the check's variables
    egress ? 'if (process.env.PWD === process.cwd()) delete process.env.PWD' : '',
    egress ? `routeThrough(${JSON.stringify(egress)}, reportRefusal)` : '',
    ...bridges.map(([port, socket]) => `bridgeTo(${port}, ${JSON.stringify(socket)})`),
    '',
  ].join('\n')
}
