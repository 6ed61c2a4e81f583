/**
 * `sslCheckDomain`: the certificate of a domain a check names, read on each run of the check
 * (any type that runs). A TLS connection to the domain's port 443, through the private-target
 * policy (targets.ts: the name's addresses are checked before connecting, the connected
 * address after), with SNI set to the domain, a short timeout, and the certificate read even
 * when it is not trusted. Whatever goes wrong here is the run's certificate error; it never
 * fails the check's own run.
 */
import { checkServerIdentity, connect, type PeerCertificate, type TLSSocket } from 'node:tls'
import { daysRemaining } from './api.js'
import { connectedRefusal, guardedLookup, refusalIn } from './targets.js'
import type { RunOptions, SslCheckResult } from './types.js'
import { systemClock } from './clock.js'

/** The port whose certificate is read: the https port. */
export const SSL_CHECK_PORT = 443
/** How long connecting and the TLS handshake may take, in ms. */
export const SSL_CHECK_TIMEOUT_MS = 5000

/** OpenSSL's verification codes (the socket's authorizationError), readable. */
const VERIFY_ERRORS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its issuer is not known',
  UNABLE_TO_GET_ISSUER_CERT: 'its issuer is not known',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its issuer is not known',
  CERT_NOT_YET_VALID: 'not valid yet',
  CERT_REVOKED: 'revoked',
}

/** A readable reason for a failed connection or handshake. */
function reason(domain: string, port: number, error: NodeJS.ErrnoException): string {
  const refused = refusalIn(error)
  if (refused) return refused.message
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' || error.code === 'ENODATA') return `${domain} could not be resolved (${error.code})`
  if (error.code === 'ECONNREFUSED') return `${domain}:${port} refused the connection`
  return `${domain}:${port}: ${error.message}`
}

/**
 * Reads the certificate `domain` serves on port 443 (`options.tlsPort` in tests). Resolves,
 * never rejects: `daysRemaining` is null when no certificate was read, `error` says why; a
 * certificate that was read but is not trusted for the domain (an unknown issuer, another
 * name, expired) has its days and the reason in `error`.
 */
export function checkDomainCertificate(domain: string, options: RunOptions = {}): Promise<SslCheckResult> {
  const port = options.tlsPort ?? SSL_CHECK_PORT
  const now = options.now ?? systemClock.now
  const policy = { privateTargets: options.privateTargets, allowedTargets: options.allowedTargets }
  return new Promise((resolve) => {
    let settled = false
    let socket: TLSSocket | undefined
    const done = (daysLeft: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      socket?.destroy()
      resolve({ domain, daysRemaining: daysLeft, error })
    }
    const timer = setTimeout(() => done(null, `${domain}:${port}: no TLS handshake within ${SSL_CHECK_TIMEOUT_MS} ms`), SSL_CHECK_TIMEOUT_MS)
    const onAbort = () => done(null, 'the run was aborted')
    if (options.signal?.aborted) return done(null, 'the run was aborted')
    options.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      socket = connect({
        host: domain,
        port,
        servername: domain,
        rejectUnauthorized: false,
        lookup: guardedLookup(policy, port) as never,
      })
    } catch (error) {
      return done(null, reason(domain, port, error as NodeJS.ErrnoException))
    }
    // kept for the socket's life: an error after the first must not go unhandled
    socket.on('error', (error: NodeJS.ErrnoException) => done(null, reason(domain, port, error)))
    socket.once('secureConnect', () => {
      const tls = socket as TLSSocket
      const refused = connectedRefusal(policy, domain, tls)
      if (refused) return done(null, refused)
      const certificate = tls.getPeerCertificate() as PeerCertificate
      if (!certificate?.valid_to) return done(null, `${domain}:${port} sent no certificate`)
      const days = daysRemaining(certificate.valid_to, now())
      const problems: string[] = []
      const code = tls.authorized ? null : String(tls.authorizationError ?? '')
      // an expired certificate is said below, with its date
      if (code && code !== 'CERT_HAS_EXPIRED') problems.push(VERIFY_ERRORS[code] ?? code)
      const identity = checkServerIdentity(domain, certificate)
      if (identity) problems.push(identity.message)
      if (days !== null && days < 0) problems.push(`the certificate expired on ${new Date(certificate.valid_to).toISOString()}`)
      const unique = [...new Set(problems)]
      done(days, unique.length > 0 ? `the certificate of ${domain} is not trusted: ${unique.join('; ')}` : null)
    })
  })
}
