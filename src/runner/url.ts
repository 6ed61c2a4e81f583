import type { ApiCheck } from '../schema/api-check.js'
import type { UrlCheck } from '../schema/url-check.js'
import { runApiAttempt } from './api.js'
import type { AttemptOutcome, RunOptions, UrlDetails } from './types.js'

/**
 * URL checks (the reference's URL monitors): a GET with the API runner's exchange, phases,
 * redirects, TLS and private-target policy, and nothing an API check adds on top: no body, no
 * headers, no query parameters, no credentials, no variables. Without a STATUS_CODE assertion
 * a 4xx or 5xx fails, as for an API check.
 */

/** The API check a URL check runs as. */
function asApiCheck(check: UrlCheck): ApiCheck {
  return {
    ...check,
    checkType: 'API',
    request: {
      method: 'GET',
      url: check.request.url,
      followRedirects: check.request.followRedirects,
      skipSSL: check.request.skipSSL,
      ipFamily: check.request.ipFamily,
      body: '',
      bodyType: 'NONE',
      headers: [],
      queryParameters: [],
      assertions: check.request.assertions,
      basicAuth: null,
    },
  } as ApiCheck
}

/** What a URL run records before anything happened. */
export function urlDetails(check: UrlCheck): UrlDetails {
  return {
    kind: 'URL',
    method: 'GET',
    url: check.request.url,
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

/** One attempt of a URL check. */
export async function runUrlAttempt(check: UrlCheck, options: RunOptions): Promise<AttemptOutcome> {
  // no variables: a URL check's URL is sent as written
  const outcome = await runApiAttempt(asApiCheck(check), { ...options, variables: {} })
  return { ...outcome, details: { ...outcome.details, kind: 'URL' } as UrlDetails }
}
