import type { FastifyReply } from 'fastify'

/** Text in HTML content or a quoted attribute. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)
}

/** A URL a page may link or load: http(s) only (images also data:image/…); anything else is dropped. */
export function safeUrl(value: string | null | undefined, options: { image?: boolean } = {}): string | undefined {
  if (!value) return undefined
  if (options.image && /^data:image\/(png|gif|jpeg|webp|svg\+xml|x-icon|vnd\.microsoft\.icon)[;,]/i.test(value)) return value
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined
  } catch {
    return undefined
  }
}

/** JSON inside `<script type="application/json">`: `<` escaped so the text cannot close the element. */
export function jsonInHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

/** `2026-05-01 12:03 UTC`; with `seconds`, `2026-05-01 12:03:07 UTC` (a run's time, where seconds matter). */
export function formatTime(iso: string | null | undefined, options: { seconds?: boolean } = {}): string {
  if (!iso) return '–'
  const time = Date.parse(iso)
  if (Number.isNaN(time)) return '–'
  const text = new Date(time).toISOString().replace('T', ' ')
  return `${text.slice(0, options.seconds ? 19 : 16)} UTC`
}

/**
 * Headers of every HTML page: no framing, no sniffing, no referrer to other sites (same-origin:
 * a form post still carries its Origin, which the dashboard checks), the page's own content policy.
 */
export function sendHtml(reply: FastifyReply, status: number, html: string, csp: string, extra: Record<string, string> = {}): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .headers({
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      ...extra,
    })
    .send(html)
}
