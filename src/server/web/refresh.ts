import { esc, formatTime } from './html.js'

/*
 * How the dashboard's pages keep themselves current on a wall screen. The checks, a check's
 * page and a group's page carry a bar: "Updated 12:03:07 UTC · refreshes every 30 s · Pause".
 * With JavaScript (dashboard.js) the page fetches its own address once per interval, after the
 * previous answer came (never two at once, none while the tab is hidden), and swaps its <main>
 * for the new one: no reload, no flash, the scroll position kept. Without JavaScript, a meta
 * refresh in <noscript> reloads it at the same interval. `?refresh=N` sets the interval in
 * seconds (MIN_SECONDS to MAX_SECONDS), `?refresh=off` pauses it (the Pause link).
 */

export const DEFAULT_SECONDS = 30
export const MIN_SECONDS = 2
export const MAX_SECONDS = 3600

/** Seconds between refreshes, or null when paused: `off`, a number (kept within the bounds), else the default. */
export function refreshSeconds(value: unknown): number | null {
  if (value === 'off') return null
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN
  return Number.isNaN(n) ? DEFAULT_SECONDS : Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, n))
}

/** The page's address with `refresh` set (or removed with undefined), its other parameters kept. */
export function withRefresh(path: string, query: Record<string, unknown>, refresh: string | undefined): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (key !== 'refresh' && typeof value === 'string' && value !== '') params.set(key, value)
  if (refresh !== undefined) params.set('refresh', refresh)
  const text = params.toString()
  return text ? `${path}?${text}` : path
}

/** `12:03:07 UTC`. */
export const clockTime = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)} UTC`

/** The bar under a page's title: when it was made, how often it refreshes, Pause (or Resume). */
export function refreshBar(seconds: number | null, now: number, path: string, query: Record<string, unknown>): string {
  const updated = `Updated <time data-updated datetime="${new Date(now).toISOString()}">${clockTime(now)}</time>`
  if (seconds === null) {
    return `<p class="refresh muted" data-refresh="off">${updated} · paused · <a href="${esc(withRefresh(path, query, undefined))}">Resume refreshing</a></p>`
  }
  return `<p class="refresh muted" data-refresh="${seconds}">${updated} · <span data-refresh-note>refreshes every ${seconds} s</span> · <a href="${esc(withRefresh(path, query, 'off'))}">Pause</a></p>`
}

/** In the page's head: the script that refreshes it, and the reload for a browser without JavaScript. */
export function refreshHead(seconds: number | null): string {
  return `<script src="/dashboard/assets/dashboard.js" defer></script>${seconds === null ? '' : `\n<noscript><meta http-equiv="refresh" content="${seconds}"></noscript>`}`
}

/** `just now`, `12 s ago`, `4 min ago`, `3 h ago`, `5 d ago`. */
export function timeAgo(ms: number, now: number): string {
  const s = Math.floor((now - ms) / 1000)
  if (s < 5) return 'just now'
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86_400)} d ago`
}

/** A time as "2 min ago" on one line, the exact time (to the second) in its tooltip. */
export function agoElement(iso: string | null | undefined, now: number): string {
  const ms = iso ? Date.parse(iso) : Number.NaN
  if (Number.isNaN(ms)) return '–'
  return `<time class="ago" datetime="${esc(iso)}" title="${esc(formatTime(iso, { seconds: true }))}">${timeAgo(ms, now)}</time>`
}
