import { z } from 'zod'
import { isIP } from 'node:net'
import { checkBody } from './omit.js'
import { checkCommonShape, readOnlyShape, sslCheckDomainSchema } from './check.js'
import { apiCheckRules } from './api-check.js'
import { crossField } from './cross-field.js'

/**
 * Vocabularies of TCP checks (reference: ChecksV1TcpRequest, ChecksV1TcpAssertion). The
 * comparisons are the reference's eight: those that mean something on a text answer or a time.
 */
export const TCP_IP_FAMILIES = ['IPv4', 'IPv6'] as const
export const TCP_ASSERTION_SOURCES = ['RESPONSE_DATA', 'RESPONSE_TIME'] as const
export const TCP_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'IS_EMPTY', 'NOT_EMPTY', 'LESS_THAN', 'GREATER_THAN', 'CONTAINS', 'NOT_CONTAINS'] as const
/** The comparisons of a RESPONSE_TIME assertion: a time is compared with a number of milliseconds. */
export const TCP_TIME_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'] as const

/** Longest host name a TCP check may connect to. */
export const TCP_HOSTNAME_MAX_LENGTH = 2048

/**
 * One assertion of a TCP check:
 * - RESPONSE_DATA: the answer read from the connection, as text (UTF-8); `regex`, when set,
 *   narrows it to its first capture group (or the whole match);
 * - RESPONSE_TIME: the run's total time in ms (lookup, connect, exchange of data), compared
 *   with a number (`target`).
 * `property` is accepted (the reference has it) and not used.
 */
export const tcpAssertionSchema = z
  .object({
    source: z.enum(TCP_ASSERTION_SOURCES),
    comparison: z.enum(TCP_COMPARISONS),
    property: z.string().default(''),
    target: z.string().default(''),
    regex: z.string().nullable().default(''),
  })
  .check(
    crossField((v, add) => {
      if (typeof v.regex === 'string' && v.regex !== '') {
        if (v.source === 'RESPONSE_TIME') {
          add({ path: ['regex'], message: 'applies to RESPONSE_DATA only: leave it empty for RESPONSE_TIME', input: v.regex })
        } else {
          try {
            new RegExp(v.regex)
          } catch (error) {
            add({ path: ['regex'], message: `is not a valid regular expression: ${(error as Error).message}`, input: v.regex })
          }
        }
      }
      if (v.source !== 'RESPONSE_TIME') return
      if (
        typeof v.comparison === 'string' &&
        (TCP_COMPARISONS as readonly string[]).includes(v.comparison) &&
        !(TCP_TIME_COMPARISONS as readonly string[]).includes(v.comparison)
      ) {
        add({
          path: ['comparison'],
          message: `must be one of ${TCP_TIME_COMPARISONS.join(', ')} when source is RESPONSE_TIME (got "${v.comparison}")`,
          input: v.comparison,
        })
        return
      }
      const target = typeof v.target === 'string' ? v.target.trim() : ''
      if (typeof v.target === 'string' && (target === '' || !Number.isFinite(Number(target)) || Number(target) < 0)) {
        add({
          path: ['target'],
          message: `must be a number of milliseconds when source is RESPONSE_TIME (got ${JSON.stringify(v.target.slice(0, 40))})`,
          input: v.target,
        })
      }
    }),
  )

/**
 * A host to connect to: a host name or an IP address (IPv6 bare or in brackets), never a URL,
 * a `host:port` (the port is its own field) or a text with spaces.
 */
export function tcpHostnameProblem(host: string): string | undefined {
  const shown = JSON.stringify(host.slice(0, 80))
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return `must be a host name or an IP address, not a URL (got ${shown}); the port goes in request.port`
  if (/\s/.test(host)) return `must be a host name or an IP address without spaces (got ${shown})`
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  if (isIP(bare)) return undefined
  if (host.startsWith('[')) return `is not an IPv6 address (got ${shown})`
  if (host.includes(':')) return `must be a host name or an IP address without a port (got ${shown}); the port goes in request.port`
  if (!/^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/.test(host)) {
    return `is not a valid host name (got ${shown}): letters, digits, "-" and "_" in dot-separated labels, or an IP address`
  }
  return undefined
}

export const tcpRequestSchema = z.object({
  hostname: z
    .string()
    .min(1)
    .max(TCP_HOSTNAME_MAX_LENGTH)
    .check(
      z.superRefine((host, ctx) => {
        const problem = tcpHostnameProblem(host)
        if (problem) ctx.addIssue({ code: 'custom', message: problem, input: host })
      }),
    ),
  port: z.number().int().min(1).max(65535),
  /** Text sent once connected (none: nothing is sent, the answer is whatever the server says first). */
  data: z.string().min(1).nullable().default(null),
  ipFamily: z.enum(TCP_IP_FAMILIES).default('IPv4'),
  assertions: z.array(tcpAssertionSchema).default([]),
})

/**
 * Body of POST /v1/checks/tcp and PUT /v1/checks/tcp/{id} (reference: ChecksV1TcpCheckCreate).
 * `degradedResponseTime` and `maxResponseTime` default to 3000 and 5000 ms, range 0–45000.
 * Frequency 0 (sub-minute) is allowed, with `frequencyOffset` 10, 20 or 30.
 */
export const tcpCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('TCP').optional(),
    sslCheckDomain: sslCheckDomainSchema.optional(),
    degradedResponseTime: z.number().min(0).max(45000).nullable().default(3000),
    maxResponseTime: z.number().min(0).max(45000).nullable().default(5000),
    request: tcpRequestSchema,
  })
  .check(apiCheckRules)
  .transform((value) => checkBody(value, 'TCP' as const))

export type TcpCheckInput = z.input<typeof tcpCheckSchema>
export type TcpCheck = z.output<typeof tcpCheckSchema>
export type TcpRequest = z.output<typeof tcpRequestSchema>
export type TcpAssertion = z.output<typeof tcpAssertionSchema>
