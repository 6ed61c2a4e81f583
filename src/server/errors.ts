import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { validate, formatFieldIssue, type FieldIssue } from '../schema/index.js'
import type { z } from 'zod'
import type { Clock } from '../runner/clock.js'
import { StorePoolSaturated, StoreUnavailable } from './store/index.js'

/** Where a 400 found the problem (API.md: error bodies). */
export type IssueSource = 'payload' | 'query' | 'params'

/** `error` of a status whose name in API.md and the reference differs from Node's (`Request Timeout`). */
const ERROR_NAMES: Record<number, string> = { 408: 'Request Time-out' }

/** An answer other than 2xx: status, body (API.md's error shape) and extra headers. */
export class HttpError extends Error {
  readonly statusCode: number
  readonly body: Record<string, unknown>
  readonly headers: Record<string, string>
  constructor(statusCode: number, message: string, attributes?: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(message)
    this.statusCode = statusCode
    this.body = { statusCode, error: ERROR_NAMES[statusCode] ?? STATUS_CODES[statusCode] ?? 'Error', message, ...(attributes ? { attributes } : {}) }
    this.headers = headers
  }
}

export function badRequest(source: IssueSource, issues: FieldIssue[]): HttpError {
  const keys = [...new Set(issues.map((i) => i.path))]
  const first = issues[0]
  return new HttpError(400, first ? formatFieldIssue(first) : 'Bad request', { source, keys, issues })
}

export function notFound(resource: string): HttpError {
  return new HttpError(404, `${resource} not found`)
}

export function routeNotFound(request: FastifyRequest): HttpError {
  return new HttpError(404, `Route ${request.method} ${request.url.split('?')[0]} not found`)
}

export function conflict(message: string): HttpError {
  return new HttpError(409, message)
}

/** The value the client sent at a dotted issue path (query and params values are strings). */
function sentAt(input: unknown, path: string): unknown {
  let value = input
  for (const part of path === '' ? [] : path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/**
 * Says what the client sent where a schema only saw its conversion: a query `limit=1e999`
 * becomes Infinity on the way, `limit=-1e20` a long number, and a message must quote what
 * the client wrote. A repeated parameter (`limit=1&limit=2`) arrives as an array: the
 * parameter must be given once.
 */
function showSent(input: unknown, issue: FieldIssue): FieldIssue {
  const sent = sentAt(input, issue.path)
  if (Array.isArray(sent) && / \(got array\)$/.test(issue.message)) {
    return { path: issue.path, message: `must be given once (got ${sent.length} values)` }
  }
  if (typeof sent !== 'string') return issue
  const got = / \(got ([^()]*)\)$/.exec(issue.message)
  const shown = JSON.stringify(sent.length > 60 ? `${sent.slice(0, 57)}...` : sent)
  if (!got || got[1] === shown) return issue
  return { path: issue.path, message: `${issue.message.slice(0, got.index)} (got ${shown})` }
}

/**
 * The problems of input against a schema, worded for the client: a missing body names the
 * fields it needs, converted values show what was sent, the empty path names the body.
 */
export function schemaIssues<S extends z.ZodType>(schema: S, input: unknown, source: IssueSource): { data?: z.output<S>; issues: FieldIssue[] } {
  const result = validate(schema, input)
  if (result.ok) return { data: result.data, issues: [] }
  const name = source === 'payload' ? 'body' : source
  if (input === undefined) {
    // nothing sent: the fields an empty object lacks are what the body needs
    const empty = validate(schema, {})
    const required = empty.ok ? [] : empty.issues.filter((i) => i.path !== '' && i.message === 'is required').map((i) => i.path)
    if (required.length > 0) {
      return {
        issues: [
          { path: '', message: `${name} is required, with the field${required.length === 1 ? '' : 's'} ${required.join(', ')}` },
          ...required.map((path) => ({ path, message: 'is required' })),
        ],
      }
    }
  }
  return { issues: result.issues.map((i) => (i.path === '' ? { path: '', message: `${name} ${i.message}` } : source === 'payload' ? i : showSent(input, i))) }
}

/** Parses input with a shared schema, or throws the 400 naming every offending field. */
export function parseOr400<S extends z.ZodType>(schema: S, input: unknown, source: IssueSource): z.output<S> {
  const { data, issues } = schemaIssues(schema, input, source)
  if (issues.length > 0) throw badRequest(source, issues)
  return data as z.output<S>
}

/** Seconds a client is asked to wait (Retry-After) while the database is away. */
export const UNAVAILABLE_RETRY_SECONDS = 5

/** Retry-After of a 503 while every connection of the database pool is busy (the database is up). */
export const SATURATED_RETRY_SECONDS = 1

/** The answer while the database is away (or, `saturated`, up but with no connection free): 503, API.md's body, Retry-After. */
export function serviceUnavailable(saturated = false): HttpError {
  const seconds = saturated ? SATURATED_RETRY_SECONDS : UNAVAILABLE_RETRY_SECONDS
  const message = saturated
    ? `The server is overloaded: every database connection is busy; retry in ${seconds} second${seconds === 1 ? '' : 's'}`
    : `The database is unavailable; retry in ${seconds} seconds`
  return new HttpError(503, message, undefined, { 'retry-after': String(seconds) })
}

/** Reports a database outage at most once per this many ms (with the count of 503s meanwhile). */
const OUTAGE_REPORT_MS = 30_000

export function sendHttpError(reply: FastifyReply, error: HttpError): FastifyReply {
  return reply.code(error.statusCode).headers(error.headers).type('application/json; charset=utf-8').send(JSON.stringify(error.body))
}

/**
 * Maps anything thrown to an answer of API.md's table. Client errors fastify detects itself
 * (bad JSON, body too large, unsupported content type, bad URL) keep their status; anything
 * else is a bug and answers a plain 500 without internals.
 */
export function errorHandler(clock: Clock, report: (line: string) => void) {
  // the database away and its pool saturated are told apart, each at most once per 30 s
  const reports = { unavailable: { at: -Infinity, unreported: 0 }, saturated: { at: -Infinity, unreported: 0 } }
  return (error: FastifyError | HttpError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof HttpError) return sendHttpError(reply, error)
    if (error instanceof StoreUnavailable) {
      // the database is restarting, unreachable, locked or full, or up and every connection of
      // the pool busy: the client tries again later
      const saturated = error instanceof StorePoolSaturated
      const kind = reports[saturated ? 'saturated' : 'unavailable']
      kind.unreported++
      const now = clock.now()
      if (now - kind.at >= OUTAGE_REPORT_MS) {
        const until = saturated ? 'while the pool stays saturated' : 'until it is back'
        report(
          `${error.message}: answering 503 with Retry-After ${until}${kind.unreported > 1 ? ` (${kind.unreported} requests answered 503 since the last report)` : ''}`,
        )
        kind.at = now
        kind.unreported = 0
      }
      const answer = serviceUnavailable(saturated)
      // a page of the dashboard or a status page: a page a browser shows (their .json answers stay JSON)
      if (request.routeOptions.config?.web === true && !request.url.split('?')[0].endsWith('.json')) {
        return reply
          .code(503)
          .headers(answer.headers)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(
            `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable</title></head><body><main><h1>Temporarily unavailable</h1><p>${answer.message}.</p></main></body></html>`,
          )
      }
      return sendHttpError(reply, answer)
    }
    const status = (error as FastifyError).statusCode
    // a body problem of a route that does not exist (e.g. `QUERY /v1/checks` without a
    // content type) is still an unknown route
    if (request.is404 && typeof status === 'number' && status >= 400 && status < 500) return sendHttpError(reply, routeNotFound(request))
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (status === 400) {
        const code = (error as FastifyError).code
        const message =
          code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'Body cannot be empty when content-type is application/json'
            : error instanceof SyntaxError
              ? `Body is not valid JSON: ${error.message}`
              : error.message
        return sendHttpError(reply, new HttpError(400, message, { source: 'payload', keys: [], issues: [{ path: '', message }] }))
      }
      if (status === 413) return sendHttpError(reply, new HttpError(413, 'Request body is larger than 1 MiB'))
      return sendHttpError(reply, new HttpError(status, error.message))
    }
    report(`internal error on ${request.method} ${request.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return sendHttpError(reply, new HttpError(500, 'An internal server error occurred'))
  }
}
