/**
 * Schemas of the Monitoring API's resources: one source of truth for the constructs' props
 * (z.input), the client's validation before any request, and the local server's validation.
 */
export * from './enums.js'
export * from './rules.js'
export * from './check.js'
export * from './variable.js'
export * from './status-page.js'
export * from './maintenance-window.js'
export * from './incident.js'
export * from './runtimes.js'
export * from './issues.js'
export * from './paging.js'
export * from './cross-field.js'
export * from './api-check.js'
export * from './tcp-check.js'
export * from './url-check.js'
export * from './check-secrets.js'
export * from './heartbeat-check.js'
export * from './analytics.js'
export * from './check-types.js'
export * from './colors.js'
export * from './key.js'
