import type { StatusPageRecord, Store } from '../store/index.js'
import { statusPageState, type ServiceModel, type StatusPageState } from '../status-pages/state.js'
import { UPTIME_DAYS, type ServiceUptime } from '../status-pages/uptime.js'
import { esc, formatTime, safeUrl } from './html.js'
import { BANNER_COLORS, contrastProblems, cssVariables, themesOf, type BannerState, type ContrastProblem, type Theme } from './theme.js'

/*
 * A status page as people read it: its state (../status-pages/state.ts: services, maintenance,
 * incidents) with the page's look (logo, themes). HTML without any script, and the same content
 * as JSON for other tools.
 */

/** A page as its HTML, JSON summary and feed show it: its state (../status-pages/state.ts) and how it looks. */
export interface StatusPageModel extends StatusPageState {
  name: string
  url: string
  logo?: string
  favicon?: string
  defaultTheme: 'LIGHT' | 'DARK' | 'AUTO'
  themes: { light: Theme; dark: Theme }
  accessibility: { contrast: ContrastProblem[]; ignoredColors: string[] }
  generatedAt: string
  /** seconds between reloads of the HTML (meta refresh); null when the reader turned it off */
  refreshSeconds: number | null
}

/** How often an open page reloads itself (no script: a meta refresh). */
export const REFRESH_SECONDS = 60

export async function loadStatusPage(
  store: Store,
  account: string,
  record: StatusPageRecord,
  now: number,
  options: { refresh?: boolean } = {},
): Promise<StatusPageModel> {
  const page = record.page
  const state = await statusPageState(store, account, record, now)
  const themes = themesOf(page.themeColors)
  const shown: Array<'light' | 'dark'> = page.defaultTheme === 'LIGHT' ? ['light'] : page.defaultTheme === 'DARK' ? ['dark'] : ['light', 'dark']
  return {
    name: page.name,
    url: page.url,
    logo: safeUrl(page.logo, { image: true }),
    favicon: safeUrl(page.favicon, { image: true }),
    defaultTheme: page.defaultTheme,
    themes: { light: themes.light, dark: themes.dark },
    ...state,
    accessibility: { contrast: contrastProblems(themes, shown), ignoredColors: themes.ignored },
    generatedAt: new Date(now).toISOString(),
    refreshSeconds: options.refresh === false ? null : REFRESH_SECONDS,
  }
}

/** The JSON summary served beside the HTML. */
export function statusPageSummary(model: StatusPageModel, links: { html: string; summary: string; feed: string }) {
  return {
    name: model.name,
    url: model.url,
    links,
    status: model.status,
    statusLabel: model.statusLabel,
    cards: model.cards,
    showResponseTime: model.showResponseTime,
    maintenance: model.maintenance,
    incidents: model.incidents,
    theme: { defaultTheme: model.defaultTheme, light: model.themes.light, dark: model.themes.dark },
    accessibility: model.accessibility,
    generatedAt: model.generatedAt,
  }
}

/** No script, no outside style; images from http(s) and data: (logo, favicon). */
export const STATUS_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

function themeCss(model: StatusPageModel): string {
  const light = `:root{color-scheme:light;${cssVariables(model.themes.light)}}`
  const dark = `:root{color-scheme:dark;${cssVariables(model.themes.dark)}}`
  if (model.defaultTheme === 'LIGHT') return light
  if (model.defaultTheme === 'DARK') return dark
  return `:root{color-scheme:light dark;${cssVariables(model.themes.light)}}@media (prefers-color-scheme: dark){${dark}}`
}

const BASE_CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bodyBackgroundColor);color:var(--bodyFontColor)}
a{color:var(--linkFontColor)}
.wrap{max-width:52rem;margin:0 auto;padding:0 1rem}
header{background:var(--headerBackgroundColor);color:var(--headerFontColor);padding:1rem 0}
header .wrap{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem 1.5rem;justify-content:space-between}
.brand{display:flex;align-items:center;gap:.75rem;color:var(--headerFontColor);font-size:1.25rem;font-weight:600;margin:0}
.brand img{max-height:2.5rem;max-width:10rem}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a{color:var(--navigationFontColor)}
main{padding:1.5rem 0 2rem}
h1,h2,h3{color:var(--titleFontColor);line-height:1.25}
h2{font-size:1.25rem;margin:2rem 0 .75rem}
h3{font-size:1.05rem;margin:0 0 .5rem}
.overall{border-radius:.5rem;padding:1.1rem 1.25rem;display:flex;gap:.75rem;align-items:center}
.overall h1{font-size:1.3rem;margin:0;color:inherit}
${Object.entries(BANNER_COLORS)
  .map(([state, c]) => `.overall.${state}{background:${c.background};color:${c.text}}`)
  .join('\n')}
.card{border:1px solid var(--borderColor);background:var(--cardBackgroundColor);border-radius:.5rem;padding:1rem;margin:0 0 1rem}
.card ul{list-style:none;margin:0;padding:0}
.card li{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem;padding:.5rem 0;border-top:1px solid var(--borderColor)}
.card li:first-child{border-top:0}
.muted,time{color:var(--bodyFontColorMuted)}
.dot{display:inline-block;width:.8rem;height:.8rem;border-radius:50%;margin-right:.4rem;vertical-align:-.05rem;border:1px solid var(--borderColor)}
.operational .dot{background:#1f9d55}.degraded .dot{background:#d9a400}.partial_outage .dot{background:#e8590c}.major_outage .dot{background:#d32f2f}
.updates{list-style:none;padding:0;margin:.5rem 0 0}
.updates li{border-left:3px solid var(--borderColor);padding:.25rem 0 .25rem .75rem;margin:.5rem 0;display:block}
.status-word{font-weight:600}
.button{display:inline-block;background:var(--primaryButtonBackgroundColor);color:var(--primaryButtonFontColor);padding:.5rem 1rem;border-radius:.375rem;text-decoration:none;font-weight:600}
footer{border-top:1px solid var(--borderColor);padding:1rem 0 2rem}
footer .wrap{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between}
p,li,h1,h2,h3{overflow-wrap:anywhere}
.updated{margin:.5rem 0 0;font-size:.9rem}
.uptime{flex-basis:100%;position:relative}
.note{flex-basis:100%;margin:0;font-size:.9rem}
.note.affected{font-weight:600;border-left:3px solid #d9a400;padding-left:.5rem}
.card .bars{list-style:none;margin:.25rem 0 0;padding:0;display:flex;gap:1px;height:1.75rem}
.card .bars li.day{display:block;flex:1 1 0;min-width:0;padding:0;border:0;border-radius:1px}
.day.operational{background:#1f9d55}.day.degraded{background:#d9a400}.day.partial_outage{background:#e8590c}.day.major_outage{background:#d32f2f}.day.no_data{background:var(--borderColor)}
.day:focus{outline:2px solid var(--linkFontColor);outline-offset:1px}
.day .tip{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.day:hover .tip,.day:focus .tip{clip:auto;width:auto;height:auto;overflow:visible;white-space:normal;left:0;right:0;top:100%;z-index:1;margin-top:.25rem;padding:.5rem .75rem;border:1px solid var(--borderColor);border-radius:.375rem;background:var(--cardBackgroundColor);color:var(--bodyFontColor);box-shadow:0 2px 8px rgba(0,0,0,.25)}
.uptime-scale{display:flex;justify-content:space-between;gap:.5rem;font-size:.8rem;margin-top:.25rem}
.uptime-scale .figure{font-weight:600}
`

/** `12.34 %`, or the words for no runs. */
const uptimeText = (uptime: number | null) => (uptime === null ? 'no data' : `${uptime.toFixed(2)} %`)

/** What a day's bar says, on hover and on focus (and to a screen reader, always). */
function dayText(day: ServiceUptime['days'][number]): string {
  const runs = day.uptime === null ? 'no runs recorded' : `${uptimeText(day.uptime)} uptime (${day.passed} of ${day.passed + day.failed} runs passed)`
  const incidents = day.incidents.length === 0 ? 'no incidents' : `incidents: ${day.incidents.map((i) => `${i.name} (${i.severity.toLowerCase()})`).join('; ')}`
  return `${day.date}: ${runs}; ${incidents}.`
}

/**
 * A service's 90 days, oldest first: one bar a day, coloured by its uptime and its incidents.
 * Days with something to say (a failed run, an incident) are focusable, so the keyboard reaches
 * them without a stop per quiet day; every bar's text is in the page for screen readers.
 */
function uptimeBar(name: string, uptime: ServiceUptime): string {
  const days = uptime.days
    .map((day) => {
      const notable = day.incidents.length > 0 || (day.uptime !== null && day.uptime < 100)
      return `<li class="day ${day.state}" data-date="${day.date}" data-state="${day.state}"${notable ? ' tabindex="0"' : ''}><span class="tip">${esc(dayText(day))}</span></li>`
    })
    .join('')
  return (
    `<div class="uptime"><ol class="bars" aria-label="${esc(name)}: uptime by day, last ${UPTIME_DAYS} days">${days}</ol>` +
    `<p class="uptime-scale muted"><span>${UPTIME_DAYS} days ago</span><span class="figure" data-uptime="${uptime.uptime ?? ''}">${uptime.uptime === null ? 'No data' : `${uptimeText(uptime.uptime)} uptime`}</span><span>Today</span></p></div>`
  )
}

/** `123 ms`, `1.25 s`. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`
}

/** Under a service's name: why it is affected (a failing dependency), and its response time when the page shows it. */
function serviceNotes(s: ServiceModel): string {
  const affected = s.affectedBy ? `<p class="note affected" data-affected-by>${esc(s.affectedBy.text)}</p>` : ''
  if (s.responseTime === undefined) return affected
  const time =
    s.responseTime === null
      ? '<p class="note response-time" data-response-time="">Response time: no runs in the last 24 hours</p>'
      : `<p class="note response-time" data-response-time="${s.responseTime.averageMs}">Response time: <strong>${duration(s.responseTime.averageMs)}</strong> average over the last 24 hours</p>`
  return affected + time
}

/**
 * The overall banner: the page's state, coloured whole (theme.ts BANNER_COLORS); maintenance
 * when a window of the page's services is in progress and nothing is worse.
 */
export function bannerOf(model: Pick<StatusPageModel, 'status' | 'statusLabel' | 'maintenance'>): { state: BannerState; label: string } {
  if (model.status === 'operational' && model.maintenance.active.length > 0) return { state: 'maintenance', label: 'Maintenance in progress' }
  return { state: model.status, label: model.statusLabel }
}

export function renderStatusPage(model: StatusPageModel, links: { summary: string; feed: string }, subscribe?: { action: string }): string {
  const banner = bannerOf(model)
  const summaryHref = links.summary
  const section = (id: string, title: string, body: string) => `<section aria-labelledby="${id}"><h2 id="${id}">${esc(title)}</h2>${body}</section>`
  const windowItem = (w: { name: string; startsAt: string; endsAt: string }) =>
    `<li><span>${esc(w.name)}</span><span class="muted"><time datetime="${esc(w.startsAt)}">${esc(formatTime(w.startsAt))}</time> – <time datetime="${esc(w.endsAt)}">${esc(formatTime(w.endsAt))}</time></span></li>`
  const cards = model.cards
    .map(
      (card) =>
        `<section class="card" aria-labelledby="card-${esc(card.id)}"><h3 id="card-${esc(card.id)}">${esc(card.name)}</h3>${
          card.services.length === 0
            ? '<p class="muted">No services.</p>'
            : `<ul>${card.services.map((s) => `<li class="service ${s.state}" data-service-id="${esc(s.id)}" data-state="${s.state}"><span>${esc(s.name)}</span><span><span class="dot" aria-hidden="true"></span><span class="status-word">${esc(s.stateLabel)}</span></span>${serviceNotes(s)}${uptimeBar(s.name, s.uptime)}</li>`).join('')}</ul>`
        }</section>`,
    )
    .join('')
  const maintenance =
    model.maintenance.active.length + model.maintenance.upcoming.length === 0
      ? '<p class="muted">No maintenance is planned.</p>'
      : `${model.maintenance.active.length ? `<div class="card" id="maintenance-active"><h3>In progress</h3><ul>${model.maintenance.active.map(windowItem).join('')}</ul></div>` : ''}${
          model.maintenance.upcoming.length
            ? `<div class="card" id="maintenance-upcoming"><h3>Upcoming</h3><ul>${model.maintenance.upcoming.map(windowItem).join('')}</ul></div>`
            : ''
        }`
  const incidents =
    model.incidents.length === 0
      ? '<p class="muted">No incidents reported.</p>'
      : model.incidents
          .map(
            (i) => `<article class="card incident" data-incident-id="${esc(i.id)}" data-open="${i.open}" aria-labelledby="incident-${esc(i.id)}">
<h3 id="incident-${esc(i.id)}">${esc(i.name)}</h3>
<p class="muted">${i.open ? '<strong>Ongoing</strong>' : 'Resolved'} · ${esc(i.severity.toLowerCase())} · ${esc(i.services.join(', ') || 'no service')} · opened <time datetime="${esc(i.created_at)}">${esc(formatTime(i.created_at))}</time></p>
${i.updates.length ? `<ol class="updates" reversed>${i.updates.map((u) => `<li><span class="status-word">${esc(u.status.charAt(0) + u.status.slice(1).toLowerCase())}</span> — ${esc(u.description)} <time datetime="${esc(u.created_at)}">${esc(formatTime(u.created_at))}</time></li>`).join('')}</ol>` : ''}
</article>`,
          )
          .join('')
  return `<!doctype html>
<html lang="en" data-theme="${esc(model.defaultTheme.toLowerCase())}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${model.refreshSeconds === null ? '' : `<meta http-equiv="refresh" content="${model.refreshSeconds}">\n`}<title>${esc(model.name)} status</title>
<link rel="icon" href="${esc(model.favicon ?? 'data:,')}">
<link rel="alternate" type="application/json" href="${esc(summaryHref)}">
<link rel="alternate" type="application/atom+xml" title="${esc(model.name)} incidents and maintenance" href="${esc(links.feed)}">
<style>${themeCss(model)}${BASE_CSS}</style>
</head>
<body>
<header><div class="wrap">
<p class="brand">${model.logo ? `<img src="${esc(model.logo)}" alt="${esc(model.name)} logo">` : ''}<span>${esc(model.name)}</span></p>
<nav aria-label="Sections"><ul><li><a href="#services">Services</a></li><li><a href="#maintenance">Maintenance</a></li><li><a href="#history">Incident history</a></li></ul></nav>
</div></header>
<main><div class="wrap">
<div class="overall ${banner.state}" data-state="${banner.state}"><h1>${esc(banner.label)}</h1></div>
<p class="updated muted">Last updated <time datetime="${esc(model.generatedAt)}">${esc(formatTime(model.generatedAt))}</time> · ${
    model.refreshSeconds === null
      ? 'not refreshing · <a href="?">Refresh automatically</a>'
      : `refreshes every ${model.refreshSeconds === 60 ? 'minute' : `${model.refreshSeconds} s`} · <a href="?refresh=off">Stop refreshing</a>`
  }</p>
${section('services', 'Services', cards || '<p class="muted">No services.</p>')}
${section('maintenance', 'Maintenance', maintenance)}
${section('history', 'Incident history', incidents)}
${subscribe ? section('subscribe', 'Get updates by email', `<form class="subscribe" method="post" action="${esc(subscribe.action)}"><p><label for="subscribe-email">Email address</label> <input id="subscribe-email" name="email" type="email" required autocomplete="email"> <button class="button" type="submit">Subscribe</button></p><p class="muted">An email with a confirmation link comes first; every email has a link to unsubscribe.</p></form>`) : ''}
</div></main>
<footer><div class="wrap"><span class="muted">Updated <time datetime="${esc(model.generatedAt)}">${esc(formatTime(model.generatedAt))}</time> · <a href="${esc(links.feed)}">Atom feed</a></span><a class="button" href="${esc(summaryHref)}">JSON summary</a></div></footer>
</body>
</html>
`
}
