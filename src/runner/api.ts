import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { connect as netConnect, isIP, type Socket } from 'node:net'
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls'
import { performance } from 'node:perf_hooks'
import { Client, type Dispatcher, type buildConnector } from 'undici'
import type { ApiCheck } from '../schema/api-check.js'
import { STATUS_CODES } from 'node:http'
import { evaluateApiAssertion } from './assertions.js'
import { ApiScripts, hasApiScripts } from './api-scripts.js'
import type { ScriptRequest, ScriptResponse } from './script/api-scripts.js'
import { connectedRefusal, guardedLookup, literalRefusal, refusalIn, TargetRefused, type TargetPolicy } from './targets.js'
import { emptyOutcome, type ApiDetails, type ApiTimings, type AttemptOutcome, type RunOptions } from './types.js'
import { systemClock } from './clock.js'

/** Runner-side limit of one API run when the check sets no maxResponseTime. */
export const DEFAULT_API_TIMEOUT_MS = 45_000
/** Redirects followed at most, when `followRedirects` is on. */
export const MAX_REDIRECTS = 10
/** Bytes of a body kept for the assertions; the rest is read (for the timings) and dropped. */
export const MAX_BODY_BYTES = 1024 * 1024
/** Bytes of the body kept in the run's details. */
const DETAILS_BODY_BYTES = 64 * 1024
const MASK = '********'
const DAY_MS = 86_400_000

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Errors of a connection that never carried the request through: NETWORK_ERROR. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ECONNABORTED',
])

// ---------------------------------------------------------------------------------------------
// Variables and secrets

const VARIABLE_REFERENCE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g

class MissingVariables extends Error {}

/** Resolves `{{KEY}}` references; secret values are collected so that results can mask them. */
class Resolver {
  readonly secrets = new Set<string>()
  readonly missing: Array<{ key: string; field: string }> = []
  constructor(private variables: NonNullable<RunOptions['variables']> = {}) {}

  resolve(text: string, field: string): string {
    return text.replace(VARIABLE_REFERENCE, (whole, key: string) => {
      const entry = Object.hasOwn(this.variables, key) ? this.variables[key] : undefined
      if (entry === undefined) {
        if (!this.missing.some((m) => m.key === key)) this.missing.push({ key, field })
        return whole
      }
      const value = typeof entry === 'string' ? entry : entry.value
      if (typeof entry !== 'string' && entry.secret) this.secret(value)
      return value
    })
  }

  /** Resolves the references to variables that exist, leaving the others as written (what a setup script sees). */
  known(text: string): string {
    return text.replace(VARIABLE_REFERENCE, (whole, key: string) => {
      const entry = Object.hasOwn(this.variables, key) ? this.variables[key] : undefined
      if (entry === undefined) return whole
      const value = typeof entry === 'string' ? entry : entry.value
      if (typeof entry !== 'string' && entry.secret) this.secret(value)
      return value
    })
  }

  /** A variable a setup script set (`process.env.KEY = …`), for the references resolved after it. */
  define(key: string, value: string): void {
    const entry = Object.hasOwn(this.variables, key) ? this.variables[key] : undefined
    const secret = typeof entry === 'object' && entry.secret === true
    if (secret) this.secret(value)
    this.variables = { ...this.variables, [key]: { value, secret } }
  }

  /** Marks a value as secret, with the encoded forms it may take in a URL. */
  secret(value: string): void {
    if (value === '') return
    this.secrets.add(value)
    this.secrets.add(encodeURIComponent(value))
    this.secrets.add(new URLSearchParams({ v: value }).toString().slice(2))
  }

  mask(text: string): string {
    // longest first, so that a secret containing another is masked whole
    const secrets = [...this.secrets].sort((a, b) => b.length - a.length)
    let out = text
    for (const secret of secrets) if (secret) out = out.split(secret).join(MASK)
    return out
  }
}

/** Masks every secret in every string of a value (the run's details, messages, assertions). */
function maskDeep<T>(value: T, resolver: Resolver): T {
  if (resolver.secrets.size === 0) return value
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return resolver.mask(v)
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [resolver.mask(k), walk(x)]))
    return v
  }
  return walk(value) as T
}

interface PreparedRequest {
  method: string
  url: URL
  headers: Array<[string, string]>
  body: string | null
  /** names (lower case) of the headers marked secret, and the query parameters marked secret: for the check's own origin only */
  secretHeaders: Set<string>
  secretQuery: Array<readonly [string, string]>
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  return headers.some(([k]) => k.toLowerCase() === name)
}

/** A GRAPHQL body already in the `{"query": …, "variables": …}` JSON form is sent as it is. */
function isGraphqlEnvelope(body: string): boolean {
  try {
    const parsed: unknown = JSON.parse(body)
    return !!parsed && typeof parsed === 'object' && !Array.isArray(parsed) && typeof (parsed as { query?: unknown }).query === 'string'
  } catch {
    return false
  }
}

/** The request with variables resolved, query parameters appended, auth and body set. */
function prepare(check: ApiCheck, resolver: Resolver): PreparedRequest | string {
  const request = check.request
  const rawUrl = resolver.resolve(request.url, 'request.url')
  const secretHeaders = new Set<string>()
  const secretQuery: Array<readonly [string, string]> = []
  const headers: Array<[string, string]> = request.headers.map((h, i) => {
    const value = resolver.resolve(h.value, `request.headers[${i}].value`)
    const key = resolver.resolve(h.key, `request.headers[${i}].key`)
    if (h.secret) {
      resolver.secret(value)
      secretHeaders.add(key.toLowerCase())
    }
    return [key, value]
  })
  const query = request.queryParameters.map((q, i) => {
    const value = resolver.resolve(q.value, `request.queryParameters[${i}].value`)
    const pair = [resolver.resolve(q.key, `request.queryParameters[${i}].key`), value] as const
    if (q.secret) {
      resolver.secret(value)
      secretQuery.push(pair)
    }
    return pair
  })
  let body = request.bodyType === 'NONE' || request.method === 'HEAD' ? null : resolver.resolve(request.body, 'request.body')
  let auth: string | null = null
  if (request.basicAuth) {
    const username = resolver.resolve(request.basicAuth.username, 'request.basicAuth.username')
    const password = resolver.resolve(request.basicAuth.password, 'request.basicAuth.password')
    resolver.secret(password)
    auth = Buffer.from(`${username}:${password}`).toString('base64')
    resolver.secret(auth)
  }
  if (resolver.missing.length > 0) {
    const list = resolver.missing.map((m) => `{{${m.key}}} (in ${m.field})`).join(', ')
    throw new MissingVariables(
      `${resolver.missing.length === 1 ? 'variable' : 'variables'} ${list} ${resolver.missing.length === 1 ? 'is' : 'are'} not defined: add ${resolver.missing.length === 1 ? 'it' : 'them'} to the account's environment variables`,
    )
  }
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return `request.url "${resolver.mask(rawUrl)}" is not a valid URL`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `request.url must be http:// or https:// (got "${resolver.mask(rawUrl)}")`
  for (const [key, value] of query) url.searchParams.append(key, value)
  if (auth !== null && !hasHeader(headers, 'authorization')) headers.push(['authorization', `Basic ${auth}`])
  if (body !== null) {
    const contentType = { JSON: 'application/json', GRAPHQL: 'application/json', FORM: 'application/x-www-form-urlencoded', RAW: null, NONE: null }[
      request.bodyType
    ]
    if (request.bodyType === 'GRAPHQL' && !isGraphqlEnvelope(body)) body = JSON.stringify({ query: body })
    if (contentType && !hasHeader(headers, 'content-type')) headers.push(['content-type', contentType])
  }
  if (!hasHeader(headers, 'user-agent')) headers.push(['user-agent', 'monitors-api-check'])
  return { method: request.method, url, headers, body, secretHeaders, secretQuery }
}

// ---------------------------------------------------------------------------------------------
// One exchange

interface Exchange {
  statusCode: number
  headers: Record<string, string>
  body: Buffer
  bodySize: number
  truncated: boolean
  timings: ApiTimings
  certificate: PeerCertificate | null
  remoteAddress: string | null
}

class ExchangeError extends Error {
  constructor(
    message: string,
    readonly kind: 'network' | 'tls' | 'timeout' | 'aborted' | 'refused' | 'other',
    readonly timings: Partial<ApiTimings> = {},
  ) {
    super(message)
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100
}

function headerRecord(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
  return out
}

const TLS_HINTS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in the chain',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unknown issuer',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not match the host name',
}

/**
 * One HTTP(S) request on a connection of its own, timed from real events:
 * - a fresh undici `Client` per exchange whose `connect` is our own function opening the
 *   socket with node's net/tls: `lookup` (name resolved), `connect` (TCP established) and
 *   `secureConnect` (TLS handshake done) are the socket's own events, so dns, tcp and tls are
 *   measured, never estimated, and no pooled connection hides them;
 * - undici's diagnostics channels, filtered to this socket and its request:
 *   `undici:request:bodySent` (the request fully written), `undici:request:headers` (the
 *   response's status line and headers parsed: the first byte of the answer);
 * - the end of the body stream.
 * All on the monotonic clock (performance.now).
 */
type Marks = { start: number; lookup?: number; connect?: number; secure?: number; sent?: number; headers?: number; end?: number }

interface ExchangeSettings {
  skipSSL: boolean
  family: 4 | 6
  timeoutMs: number
  signal: AbortSignal
  policy: TargetPolicy
}

/** What one exchange learns as it goes: its times, its socket, the peer's certificate, undici's request. */
interface ExchangeState {
  https: boolean
  marks: Marks
  socket: Socket | TLSSocket | null
  certificate: PeerCertificate | null
  undiciRequest: unknown
}

async function exchange(prepared: PreparedRequest, settings: ExchangeSettings): Promise<Exchange> {
  const { url } = prepared
  const state: ExchangeState = { https: url.protocol === 'https:', marks: { start: performance.now() }, socket: null, certificate: null, undiciRequest: null }
  const stopWatching = watchRequest(state)
  const client = new Client(url.origin, {
    connect: timedConnector(state, settings),
    pipelining: 1,
    headersTimeout: settings.timeoutMs + 1000,
    bodyTimeout: settings.timeoutMs + 1000,
  })
  const partial = (): Partial<ApiTimings> => timingsOf(state.marks, state.https)
  try {
    let response: Dispatcher.ResponseData
    try {
      response = await client.request({
        path: `${url.pathname}${url.search}`,
        method: prepared.method as Dispatcher.HttpMethod,
        headers: prepared.headers.flat(),
        body: prepared.body,
        signal: settings.signal,
      })
    } catch (error) {
      throw classify(error as Error & { code?: string }, settings.signal, url, partial())
    }
    if (state.marks.headers === undefined) state.marks.headers = performance.now()
    let body: { kept: Buffer; size: number }
    try {
      body = await readBody(response.body)
    } catch (error) {
      throw classify(error as Error & { code?: string }, settings.signal, url, partial())
    }
    state.marks.end = performance.now()
    return {
      statusCode: response.statusCode,
      headers: headerRecord(response.headers),
      body: body.kept,
      bodySize: body.size,
      truncated: body.size > body.kept.length,
      timings: timingsOf(state.marks, state.https) as ApiTimings,
      certificate: state.certificate,
      remoteAddress: state.socket?.remoteAddress ?? null,
    }
  } finally {
    stopWatching()
    state.socket?.destroy()
    client.destroy().catch(() => {})
  }
}

/**
 * undici's `connect`: opens the exchange's own socket with node's net/tls, under the
 * private-target policy, and marks its lookup, TCP connect and TLS handshake from its events.
 */
function timedConnector(state: ExchangeState, settings: ExchangeSettings): buildConnector.connector {
  const { https, marks } = state
  return (options, callback) => {
    let settled = false
    const settle = (error: Error | null, s?: Socket) => {
      if (settled) return
      settled = true
      if (error) {
        s?.destroy()
        callback(error, null)
      } else callback(null, s as Socket)
    }
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1')
    const port = Number(options.port) || (https ? 443 : 80)
    // the private-target policy: an IP literal now, a name's every address in the lookup, and
    // the address actually connected to once connected (targets.ts)
    const literal = literalRefusal(settings.policy, options.hostname, port)
    if (literal) return settle(new TargetRefused(literal))
    const base = { host, port, family: settings.family, ...(settings.policy.privateTargets === 'deny' ? { lookup: guardedLookup(settings.policy, port) } : {}) }
    const s: Socket | TLSSocket = https
      ? tlsConnect({ ...base, servername: isIP(host) ? undefined : host, rejectUnauthorized: !settings.skipSSL, ALPNProtocols: ['http/1.1'] })
      : netConnect(base)
    state.socket = s
    s.setNoDelay(true)
    s.once('lookup', () => {
      marks.lookup = performance.now()
    })
    s.once('connect', () => {
      marks.connect = performance.now()
      const refused = connectedRefusal(settings.policy, options.hostname, s)
      if (refused) return settle(new TargetRefused(refused), s)
      if (!https) settle(null, s)
    })
    if (https) {
      s.once('secureConnect', () => {
        marks.secure = performance.now()
        const peer = (s as TLSSocket).getPeerCertificate()
        state.certificate = peer && Object.keys(peer).length > 0 ? peer : null
        settle(null, s)
      })
    }
    s.once('error', (error) => settle(error, s))
  }
}

/**
 * Marks the request fully sent and the response's headers from undici's diagnostics channels,
 * filtered to the exchange's socket and request; answers the function that stops watching.
 */
function watchRequest(state: ExchangeState): () => void {
  const { marks } = state
  const onSent = (message: unknown) => {
    const m = message as { request: unknown }
    if (state.undiciRequest !== null && m.request === state.undiciRequest) marks.sent = performance.now()
  }
  const onSendHeaders = (message: unknown) => {
    const m = message as { request: unknown; socket: unknown }
    if (state.socket !== null && m.socket === state.socket) state.undiciRequest = m.request
  }
  const onHeaders = (message: unknown) => {
    const m = message as { request: unknown }
    if (state.undiciRequest !== null && m.request === state.undiciRequest && marks.headers === undefined) marks.headers = performance.now()
  }
  subscribe('undici:client:sendHeaders', onSendHeaders)
  subscribe('undici:request:bodySent', onSent)
  subscribe('undici:request:headers', onHeaders)
  return () => {
    unsubscribe('undici:client:sendHeaders', onSendHeaders)
    unsubscribe('undici:request:bodySent', onSent)
    unsubscribe('undici:request:headers', onHeaders)
  }
}

/** Reads a response body to its end, keeping its first MAX_BODY_BYTES; `size` counts every byte. */
async function readBody(stream: AsyncIterable<unknown>): Promise<{ kept: Buffer; size: number }> {
  const kept: Buffer[] = []
  let keptBytes = 0
  let size = 0
  for await (const chunk of stream) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (keptBytes < MAX_BODY_BYTES) {
      const part = buffer.subarray(0, MAX_BODY_BYTES - keptBytes)
      kept.push(part)
      keptBytes += part.length
    }
  }
  return { kept: Buffer.concat(kept), size }
}

/** Phases from the marks that were reached; a phase not reached is left out. */
function timingsOf(marks: Marks, https: boolean): Partial<ApiTimings> {
  const t: Partial<ApiTimings> = {}
  const lookupEnd = marks.lookup ?? (marks.connect !== undefined ? marks.start : undefined)
  if (lookupEnd !== undefined) t.dns = round(lookupEnd - marks.start)
  if (marks.connect !== undefined && lookupEnd !== undefined) t.tcp = round(marks.connect - lookupEnd)
  if (marks.connect !== undefined) t.tls = https && marks.secure !== undefined ? round(marks.secure - marks.connect) : 0
  const sent = marks.sent ?? marks.secure ?? marks.connect
  if (marks.headers !== undefined && sent !== undefined) t.firstByte = round(marks.headers - sent)
  if (marks.end !== undefined && marks.headers !== undefined) t.download = round(marks.end - marks.headers)
  const last = marks.end ?? performance.now()
  t.total = round(last - marks.start)
  return t
}

function classify(error: Error & { code?: string; cause?: unknown }, signal: AbortSignal, url: URL, timings: Partial<ApiTimings>): ExchangeError {
  const where = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`
  if (signal.aborted) {
    const reason = signal.reason as { kind?: string; message?: string } | undefined
    if (reason?.kind === 'timeout') return new ExchangeError(reason.message ?? 'timed out', 'timeout', timings)
    return new ExchangeError('run aborted before the response was complete', 'aborted', timings)
  }
  const refused = refusalIn(error)
  if (refused) return new ExchangeError(refused.message, 'refused', timings)
  const code = error.code ?? (error.cause as { code?: string } | undefined)?.code ?? ''
  if (code in TLS_HINTS || /certificate|self.signed/i.test(error.message)) {
    const hint = TLS_HINTS[code] ?? error.message
    return new ExchangeError(`TLS certificate of ${where} was refused: ${hint}${code ? ` (${code})` : ''}; set request.skipSSL to accept it`, 'tls', timings)
  }
  if (NETWORK_CODES.has(code) || /ECONN|socket|closed/i.test(error.message)) {
    const what = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'host name not found' : error.message
    return new ExchangeError(
      `${url.protocol.replace(':', '')} request to ${where} failed: ${what}${code && !what.includes(code) ? ` (${code})` : ''}`,
      'network',
      timings,
    )
  }
  return new ExchangeError(`${url.protocol.replace(':', '')} request to ${where} failed: ${error.message}`, 'other', timings)
}

function addTimings(sum: ApiTimings | null, t: Partial<ApiTimings>): ApiTimings {
  const base = sum ?? { dns: 0, tcp: 0, tls: 0, firstByte: 0, download: 0, total: 0 }
  return {
    dns: round(base.dns + (t.dns ?? 0)),
    tcp: round(base.tcp + (t.tcp ?? 0)),
    tls: round(base.tls + (t.tls ?? 0)),
    firstByte: round(base.firstByte + (t.firstByte ?? 0)),
    download: round(base.download + (t.download ?? 0)),
    total: round(base.total + (t.total ?? 0)),
  }
}

/** Whole days from `now` to the certificate's `valid_to`. */
export function daysRemaining(validTo: string, now: number): number | null {
  const end = Date.parse(validTo)
  if (!Number.isFinite(end)) return null
  return Math.floor((end - now) / DAY_MS)
}

/** The request of a redirect: 303 (and 301/302 after a POST) become GET without a body. */
function redirected(previous: PreparedRequest, statusCode: number, location: URL): PreparedRequest {
  const toGet = statusCode === 303 ? previous.method !== 'HEAD' : (statusCode === 301 || statusCode === 302) && previous.method === 'POST'
  let headers = previous.headers
  if (toGet) headers = headers.filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase()))
  // credentials go only to the origin they were written for: the authorization header (basic
  // auth among them), cookies, the headers marked secret, and the secret query parameters a
  // redirect carries along in its location
  let url = location
  let secretHeaders = previous.secretHeaders
  let secretQuery = previous.secretQuery
  if (location.origin !== previous.url.origin) {
    headers = headers.filter(
      ([k]) => !['authorization', 'cookie', 'proxy-authorization'].includes(k.toLowerCase()) && !previous.secretHeaders.has(k.toLowerCase()),
    )
    if (previous.secretQuery.length > 0) {
      url = new URL(location)
      for (const [key, value] of previous.secretQuery) url.searchParams.delete(key, value)
      // no "?" left behind when nothing else was there
      if ([...url.searchParams].length === 0) url.search = ''
    }
    secretHeaders = new Set()
    secretQuery = []
  }
  return { method: toGet ? 'GET' : previous.method, url, headers, body: toGet ? null : previous.body, secretHeaders, secretQuery }
}

// ---------------------------------------------------------------------------------------------
// The attempt

/**
 * One attempt of an API check: the request (and its redirects), the status, the assertions
 * and the thresholds. Secrets (basicAuth, secret headers and query parameters, secret
 * variables) are masked in everything the attempt returns.
 */
export async function runApiAttempt(check: ApiCheck, options: RunOptions): Promise<AttemptOutcome> {
  const resolver = new Resolver(options.variables)
  try {
    return await attemptApi(check, options, resolver)
  } catch (error) {
    // an unexpected error becomes an error of the run (runner/index.ts): without the secrets
    throw new Error(resolver.mask((error as Error).message))
  }
}

/** An API check's details before anything was sent. */
export function blankApiDetails(request: ApiCheck['request']): ApiDetails {
  return {
    kind: 'API',
    method: request.method,
    url: request.url,
    statusCode: null,
    headers: {},
    body: '',
    bodySize: 0,
    bodyTruncated: false,
    redirects: [],
    timings: null,
    sslDaysRemaining: null,
    remoteAddress: null,
  }
}

async function attemptApi(check: ApiCheck, options: RunOptions, resolver: Resolver): Promise<AttemptOutcome> {
  const details = blankApiDetails(check.request)
  const outcome = emptyOutcome(details)
  // the setup and teardown scripts (api-scripts.ts), in a process of their own for this attempt
  const scripts = hasApiScripts(check) ? await ApiScripts.open(check, options) : null
  const finish = () => {
    if (scripts && !('problem' in scripts)) details.scripts = scripts.reports
    return maskDeep(outcome, resolver)
  }
  if (scripts && 'problem' in scripts) {
    outcome.runnerError = scripts.problem
    return finish()
  }
  try {
    const effective = scripts ? await setUp(check, scripts, resolver, outcome) : check
    if (!effective) return finish()
    const prepared = prepareOrRecord(effective, resolver, outcome)
    if (!prepared) return finish()
    details.url = prepared.url.toString()
    const followed: Followed = { response: null, prepared, timings: null }
    // a timeout names the host of the hop under way
    const deadline = attemptDeadline(effective, options, () => followed.prepared.url.host)
    try {
      await follow(effective, followed, { ...deadline, options }, outcome, details)
    } finally {
      deadline.dispose()
    }
    if (followed.response && scripts?.hasTearDown && !(await tearDown(followed as Followed & { response: Exchange }, scripts, resolver, outcome)))
      return finish()
    if (followed.response) judgeResponse(effective, followed as Followed & { response: Exchange }, outcome, details)
    return finish()
  } finally {
    scripts?.close()
  }
}

/**
 * The setup scripts run on the request as written (variables that exist resolved); answers the
 * check with the request they left (the variables they set resolved from then on), or null when
 * one failed (an error of the run, naming the script).
 */
async function setUp(check: ApiCheck, scripts: ApiScripts, resolver: Resolver, outcome: AttemptOutcome): Promise<ApiCheck | null> {
  const r = check.request
  const pairs = (items: ApiCheck['request']['headers']) =>
    Object.fromEntries(
      items.map((h) => {
        const value = resolver.known(h.value)
        if (h.secret) resolver.secret(value)
        return [resolver.known(h.key), value]
      }),
    )
  const view: ScriptRequest = {
    method: r.method,
    url: resolver.known(r.url),
    body: resolver.known(r.body),
    headers: pairs(r.headers),
    queryParameters: pairs(r.queryParameters),
  }
  scripts.addSecrets(resolver.secrets)
  const done = await scripts.setup(view)
  if ('error' in done) {
    outcome.runnerError = done.error
    return null
  }
  for (const [key, value] of Object.entries(done.variables)) resolver.define(key, value)
  const secretOf = (items: ApiCheck['request']['headers']) => new Set(items.filter((h) => h.secret).map((h) => h.key.toLowerCase()))
  const items = (given: Record<string, string>, secret: Set<string>) =>
    Object.entries(given).map(([key, value]) => ({ key, value: String(value), locked: false, secret: secret.has(key.toLowerCase()) }))
  const { request } = done
  return {
    ...check,
    request: {
      ...r,
      method: request.method.toUpperCase() as ApiCheck['request']['method'],
      url: request.url,
      body: request.body,
      // a body the script gave a check that sends none is sent as it is
      bodyType: r.bodyType === 'NONE' && request.body !== view.body ? 'RAW' : r.bodyType,
      headers: items(request.headers, secretOf(r.headers)),
      queryParameters: items(request.queryParameters, secretOf(r.queryParameters)),
    },
  }
}

/**
 * The teardown scripts run on the last response, which they may change before the assertions;
 * false when one failed (an assertion it made fails the run, anything else is an error of the run).
 */
async function tearDown(followed: Followed & { response: Exchange }, scripts: ApiScripts, resolver: Resolver, outcome: AttemptOutcome): Promise<boolean> {
  const { response: final, prepared } = followed
  const request: ScriptRequest = {
    method: prepared.method,
    url: prepared.url.toString(),
    body: prepared.body ?? '',
    headers: Object.fromEntries(prepared.headers),
    queryParameters: Object.fromEntries(prepared.url.searchParams),
  }
  const view: ScriptResponse = {
    statusCode: final.statusCode,
    statusText: STATUS_CODES[final.statusCode] ?? '',
    headers: { ...final.headers },
    body: final.body.toString('utf8'),
    timings: final.timings ? { ...final.timings } : null,
  }
  scripts.addSecrets(resolver.secrets)
  const done = await scripts.tearDown(request, view)
  if ('error' in done) {
    if (done.assertion) outcome.failures.push(done.error)
    else outcome.runnerError = done.error
    return false
  }
  const left = done.response
  final.statusCode = left.statusCode
  final.headers = Object.fromEntries(Object.entries(left.headers).map(([k, v]) => [k.toLowerCase(), String(v)]))
  if (left.body !== view.body) {
    final.body = Buffer.from(left.body, 'utf8')
    final.bodySize = final.body.length
    final.truncated = false
  }
  return true
}

/** The request of the check, variables resolved; null when it cannot be sent (the reason is in the outcome). */
function prepareOrRecord(check: ApiCheck, resolver: Resolver, outcome: AttemptOutcome): PreparedRequest | null {
  try {
    const result = prepare(check, resolver)
    if (typeof result !== 'string') return result
    outcome.failures.push(result)
    return null
  } catch (error) {
    if (!(error instanceof MissingVariables)) throw error
    outcome.runnerError = error.message
    return null
  }
}

/**
 * The attempt's limit: the check's maxResponseTime (or the default) and the run's own cap,
 * whichever is shorter; its signal aborts at the limit (a timeout) or with the run's signal.
 */
function attemptDeadline(check: ApiCheck, options: RunOptions, host: () => string): { timeoutMs: number; signal: AbortSignal; dispose(): void } {
  const limits = [check.maxResponseTime ?? DEFAULT_API_TIMEOUT_MS]
  if (options.timeoutMs !== undefined) limits.push(options.timeoutMs)
  const timeoutMs = Math.min(...limits)
  const controller = new AbortController()
  const timer = setTimeout(
    () => {
      controller.abort({ kind: 'timeout', message: `no complete response from ${host()} within ${timeoutMs} ms` })
    },
    Math.max(0, timeoutMs),
  )
  const onAbort = () => controller.abort({ kind: 'aborted' })
  if (options.signal?.aborted) onAbort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  return {
    timeoutMs,
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
    },
  }
}

/** Where the exchanges ended: the last response (none when an exchange failed), the request that got it, the summed timings. */
interface Followed {
  response: Exchange | null
  prepared: PreparedRequest
  timings: ApiTimings | null
}

/**
 * Sends the request and follows its redirects (when the check says so), moving `followed` on
 * with each hop; failures go into the outcome.
 */
async function follow(
  check: ApiCheck,
  followed: Followed,
  limit: { timeoutMs: number; signal: AbortSignal; options: RunOptions },
  outcome: AttemptOutcome,
  details: ApiDetails,
): Promise<void> {
  const { request } = check
  const now = limit.options.now ?? systemClock.now
  for (let hop = 0; ; hop += 1) {
    const { prepared } = followed
    let current: Exchange
    try {
      current = await exchange(prepared, {
        skipSSL: request.skipSSL,
        family: request.ipFamily === 'IPv6' ? 6 : 4,
        timeoutMs: limit.timeoutMs,
        signal: limit.signal,
        policy: limit.options,
      })
    } catch (error) {
      if (!(error instanceof ExchangeError)) throw error
      followed.timings = addTimings(followed.timings, error.timings)
      details.timings = followed.timings
      recordExchangeError(error, hop, prepared, outcome)
      followed.response = null
      return
    }
    followed.timings = addTimings(followed.timings, current.timings)
    followed.response = current
    if (current.certificate && prepared.url.protocol === 'https:' && details.sslDaysRemaining === null) {
      // the certificate of the first https hop (the URL the check names, when it is https)
      details.sslDaysRemaining = daysRemaining(current.certificate.valid_to, now())
    }
    const next = redirectTarget(check, current, hop, prepared, outcome)
    if (!next) return
    details.redirects.push({ statusCode: current.statusCode, location: next.toString() })
    followed.prepared = redirected(prepared, current.statusCode, next)
    details.url = followed.prepared.url.toString()
  }
}

/** An exchange that failed, as the outcome says it: aborted, refused by the policy, or a network failure or timeout. */
function recordExchangeError(error: ExchangeError, hop: number, prepared: PreparedRequest, outcome: AttemptOutcome): void {
  if (error.kind === 'aborted') {
    outcome.aborted = true
    outcome.runnerError = error.message
  } else if (error.kind === 'refused') {
    // never tried: an error of the run (hasErrors), with nothing of the target in it
    outcome.runnerError = hop > 0 ? `redirect ${hop} to ${prepared.url.origin} not followed: ${error.message}` : error.message
  } else {
    outcome.networkError = error.kind === 'network' || error.kind === 'timeout'
    outcome.timedOut = error.kind === 'timeout'
    outcome.failures.push(error.message)
  }
}

/** The URL a response redirects to, when it is followed; undefined when the exchanges end here (a bad redirect fails the outcome). */
function redirectTarget(check: ApiCheck, current: Exchange, hop: number, prepared: PreparedRequest, outcome: AttemptOutcome): URL | undefined {
  const location = current.headers.location
  if (!check.request.followRedirects || !REDIRECT_STATUSES.has(current.statusCode) || !location) return undefined
  if (hop >= MAX_REDIRECTS) {
    outcome.failures.push(`more than ${MAX_REDIRECTS} redirects (last to ${location})`)
    return undefined
  }
  let next: URL
  try {
    next = new URL(location, prepared.url)
  } catch {
    outcome.failures.push(`redirect to an invalid location "${location}"`)
    return undefined
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    outcome.failures.push(`redirect to a location that is not http(s): "${location}"`)
    return undefined
  }
  return next
}

/** The last response in the details, then its assertions, its status and its response time against the thresholds. */
function judgeResponse(check: ApiCheck, followed: Followed & { response: Exchange }, outcome: AttemptOutcome, details: ApiDetails): void {
  const { request } = check
  const { response: final, timings, prepared } = followed
  const text = final.body.toString('utf8')
  details.statusCode = final.statusCode
  details.headers = final.headers
  details.body = final.body.subarray(0, DETAILS_BODY_BYTES).toString('utf8')
  details.bodySize = final.bodySize
  details.bodyTruncated = final.bodySize > DETAILS_BODY_BYTES
  details.timings = timings
  details.remoteAddress = final.remoteAddress
  outcome.responseTime = timings?.total ?? null
  const responseTime = outcome.responseTime ?? 0

  outcome.assertions = request.assertions.map((a) =>
    evaluateApiAssertion(a, { statusCode: final.statusCode, headers: final.headers, body: text, responseTime }),
  )
  // Without a STATUS_CODE assertion, an error status (4xx, 5xx) fails the run.
  if (!request.assertions.some((a) => a.source === 'STATUS_CODE') && final.statusCode >= 400) {
    outcome.failures.push(`status code ${final.statusCode} from ${prepared.url.host} (no STATUS_CODE assertion: 4xx and 5xx fail)`)
  }
  if (check.maxResponseTime !== null && responseTime > check.maxResponseTime) {
    outcome.failures.push(`response time ${responseTime} ms is over maxResponseTime ${check.maxResponseTime} ms`)
  } else if (check.degradedResponseTime !== null && responseTime > check.degradedResponseTime) {
    outcome.degraded.push(`response time ${responseTime} ms is over degradedResponseTime ${check.degradedResponseTime} ms`)
  }
}
