import { formatTime } from './html.js'
import type { StatusPageModel } from './status-page.js'

/*
 * A status page's incidents and maintenance as an Atom feed (RFC 4287), for feed readers and
 * chat integrations: one entry per incident the page lists (updated when its newest update was
 * posted, its updates as the content) and one per maintenance occurrence in progress or next
 * (updated when its window was created or last changed). Ids are the page's own address with
 * a fragment, so an entry keeps its id as long as the page keeps its address.
 */

/** Text for XML: escaped, without the characters XML 1.0 cannot carry (C0 controls but tab and new lines, lone surrogates, U+FFFE/U+FFFF). */
export function xmlText(value: unknown): string {
  return String(value ?? '')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string)
}

const latest = (times: string[]) => times.reduce((a, b) => (b > a ? b : a))

/** `origin` is the scheme and host the page was asked on; `html` and `self` the page's and the feed's paths. */
export function renderFeed(model: StatusPageModel, origin: string, paths: { html: string; self: string }): string {
  const page = `${origin}${paths.html}`
  const entries: Array<{ updated: string; xml: string }> = []
  for (const incident of model.incidents) {
    const updated = latest([incident.created_at, ...incident.updates.map((u) => u.created_at)])
    const state = incident.open ? 'Ongoing' : 'Resolved'
    const content =
      `<p>${xmlText(state)} · ${xmlText(incident.severity.toLowerCase())} · ${xmlText(incident.services.join(', ') || 'no service')}</p>` +
      (incident.updates.length
        ? `<ul>${incident.updates.map((u) => `<li><strong>${xmlText(u.status)}</strong> (${xmlText(formatTime(u.created_at))}): ${xmlText(u.description)}</li>`).join('')}</ul>`
        : '')
    entries.push({
      updated,
      xml: `<entry>
<id>${xmlText(`${page}#incident-${incident.id}`)}</id>
<title>${xmlText(`${incident.open ? '' : 'Resolved: '}${incident.name}`)}</title>
<published>${xmlText(incident.created_at)}</published>
<updated>${xmlText(updated)}</updated>
<link rel="alternate" type="text/html" href="${xmlText(`${page}#incident-${incident.id}`)}"/>
<category term="incident" label="Incident"/>
<category term="${xmlText(incident.severity.toLowerCase())}"/>
<content type="html">${xmlText(content)}</content>
</entry>`,
    })
  }
  const windows = [...model.maintenance.active.map((w) => ({ ...w, now: true })), ...model.maintenance.upcoming.map((w) => ({ ...w, now: false }))]
  for (const w of windows) {
    const text = `${w.now ? 'In progress' : 'Scheduled'}: ${formatTime(w.startsAt)} – ${formatTime(w.endsAt)}`
    entries.push({
      updated: w.changedAt,
      xml: `<entry>
<id>${xmlText(`${page}#maintenance-${w.id}-${w.startsAt}`)}</id>
<title>${xmlText(`Maintenance: ${w.name}`)}</title>
<updated>${xmlText(w.changedAt)}</updated>
<link rel="alternate" type="text/html" href="${xmlText(`${page}#maintenance`)}"/>
<category term="maintenance" label="Maintenance"/>
<summary type="text">${xmlText(text)}</summary>
</entry>`,
    })
  }
  entries.sort((a, b) => b.updated.localeCompare(a.updated))
  const updated = latest([model.changedAt, ...entries.map((e) => e.updated)])
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${xmlText(page)}</id>
<title>${xmlText(`${model.name} status`)}</title>
<subtitle>${xmlText(`Incidents and maintenance of ${model.name}`)}</subtitle>
<updated>${xmlText(updated)}</updated>
<link rel="self" type="application/atom+xml" href="${xmlText(`${origin}${paths.self}`)}"/>
<link rel="alternate" type="text/html" href="${xmlText(page)}"/>
<author><name>${xmlText(model.name)}</name></author>
<generator>monitors</generator>
${entries.map((e) => e.xml).join('\n')}
</feed>
`
}
