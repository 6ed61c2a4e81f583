import { z } from 'zod'
import { checkBody } from './omit.js'
import { API_URL_MAX_LENGTH } from './api-check.js'
import { checkCommonShape, readOnlyShape, sslCheckDomainSchema, runFrequencySchema } from './check.js'
import { crossField } from './cross-field.js'
import { frequencyOffsetProblem } from './rules.js'
import { RUN_FREQUENCIES } from './enums.js'

/**
 * Vocabularies of URL checks, the reference's URL monitors (ChecksV1UrlRequest,
 * ChecksV1UrlAssertion): a GET, assertions on the status code only.
 */
export const URL_METHODS = ['GET'] as const
export const URL_IP_FAMILIES = ['IPv4', 'IPv6'] as const
export const URL_ASSERTION_SOURCES = ['STATUS_CODE'] as const
export const URL_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'] as const

/** One assertion of a URL check: the last response's status code against a number. */
export const urlAssertionSchema = z
  .object({
    source: z.enum(URL_ASSERTION_SOURCES),
    comparison: z.enum(URL_COMPARISONS),
    property: z.string().default(''),
    target: z.string().default(''),
    regex: z.string().nullable().default(''),
  })
  .check(
    crossField((v, add) => {
      if (typeof v.target === 'string' && !/^\d{3}$/.test(v.target.trim())) {
        add({ path: ['target'], message: `must be a status code, a number from 100 to 599 (got ${JSON.stringify(v.target.slice(0, 40))})`, input: v.target })
      } else if (typeof v.target === 'string' && !(Number(v.target) >= 100 && Number(v.target) <= 599)) {
        add({ path: ['target'], message: `must be a status code, a number from 100 to 599 (got ${JSON.stringify(v.target)})`, input: v.target })
      }
      if (typeof v.regex === 'string' && v.regex !== '')
        add({ path: ['regex'], message: 'is not used by a STATUS_CODE assertion: leave it empty', input: v.regex })
    }),
  )

/** An `http://` or `https://` URL; a URL check has no variables, so `{{` is refused. */
const urlSchema = z
  .string()
  .min(1)
  .max(API_URL_MAX_LENGTH)
  .check(
    z.superRefine((url, ctx) => {
      const shown = JSON.stringify(url.slice(0, 80))
      if (!/^https?:\/\//i.test(url)) {
        ctx.addIssue({ code: 'custom', message: `must start with http:// or https:// (got ${shown})`, input: url })
        return
      }
      if (url.includes('{{')) {
        ctx.addIssue({
          code: 'custom',
          message: `cannot hold {{VARIABLE}} references: a URL check has no variables (use an ApiCheck) (got ${shown})`,
          input: url,
        })
        return
      }
      try {
        if (new URL(url).hostname === '') throw new Error('no host')
      } catch {
        ctx.addIssue({ code: 'custom', message: `is not a valid URL (got ${shown})`, input: url })
      }
    }),
  )

export const urlRequestSchema = z.object({
  method: z.enum(URL_METHODS).default('GET'),
  url: urlSchema,
  followRedirects: z.boolean().default(true),
  skipSSL: z.boolean().default(false),
  ipFamily: z.enum(URL_IP_FAMILIES).default('IPv4'),
  assertions: z.array(urlAssertionSchema).default([]),
})

/** frequencyOffset of a URL check: the spec's ranges (its frequency is never 0: see runFrequencySchema). */
const urlCheckRules = crossField((value, add) => {
  if (!(RUN_FREQUENCIES as readonly unknown[]).includes(value.frequency ?? 10)) return
  const problem = frequencyOffsetProblem(value.frequency ?? 10, value.frequencyOffset)
  if (problem) add({ path: ['frequencyOffset'], message: problem, input: value.frequencyOffset })
})

/**
 * Body of POST /v1/checks/url and PUT /v1/checks/url/{id} (reference: ChecksV1UrlMonitorCreate).
 * `degradedResponseTime` and `maxResponseTime` default to 3000 and 5000 ms, range 0–45000. The
 * spec keeps sub-minute frequencies for API and TCP checks: frequency 0 is refused here.
 */
export const urlCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('URL').optional(),
    sslCheckDomain: sslCheckDomainSchema.optional(),
    frequency: runFrequencySchema(),
    degradedResponseTime: z.number().min(0).max(45000).nullable().default(3000),
    maxResponseTime: z.number().min(0).max(45000).nullable().default(5000),
    request: urlRequestSchema,
  })
  .check(urlCheckRules)
  .transform((value) => checkBody(value, 'URL' as const))

export type UrlCheckInput = z.input<typeof urlCheckSchema>
export type UrlCheck = z.output<typeof urlCheckSchema>
