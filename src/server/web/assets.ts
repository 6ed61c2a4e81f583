import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/*
 * The dashboard's static files. uPlot (the chart library, a dependency of the package) is
 * read from its npm folder; the dashboard's own script and style are these strings. Nothing
 * is built by the user and nothing comes from a CDN.
 */

const resolver = createRequire(import.meta.url)

function uplotFile(name: string): () => string {
  let text: string | undefined
  return () => (text ??= readFileSync(resolver.resolve(`uplot/dist/${name}`), 'utf8'))
}

/** Draws the response-time chart from the JSON the page embeds (`#chart-data`); the results table stays the text version. */
const DASHBOARD_JS = `(function () {
  var data = document.getElementById('chart-data')
  var target = document.getElementById('chart')
  if (!data || !target || typeof uPlot !== 'function') return
  var chart = JSON.parse(data.textContent)
  if (!chart.x.length) return
  var colors = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f']
  var series = [{ label: 'time' }].concat(chart.series.map(function (s, i) {
    return { label: s.label, stroke: colors[i % colors.length], width: 2, spanGaps: true, points: { show: true, size: 5 }, value: function (u, v) { return v == null ? '–' : Math.round(v) + ' ms' } }
  }))
  var opts = {
    width: Math.max(280, target.clientWidth),
    height: 260,
    series: series,
    axes: [{}, { label: 'ms', values: function (u, vals) { return vals.map(function (v) { return v + ' ms' }) } }],
    scales: { x: { time: true } },
  }
  var plot = new uPlot(opts, [chart.x].concat(chart.series.map(function (s) { return s.values })), target)
  target.setAttribute('data-drawn', 'true')
  window.addEventListener('resize', function () { plot.setSize({ width: Math.max(280, target.clientWidth), height: 260 }) })
})()
`

const DASHBOARD_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f6f7f9;color:#1f2937}
a{color:#1d4ed8}
header{background:#111827;color:#fff}
header .wrap{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem}
header a{color:#e5e7eb}
.brand{font-weight:600;color:#fff;text-decoration:none}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0}
.wrap{max-width:72rem;margin:0 auto}
main .wrap{padding:1rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d1d5db}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f3f4f6;font-weight:600}
caption{text-align:left;padding:.3rem .6rem}
.scroll{overflow-x:auto}
code{overflow-wrap:anywhere}
button,.button,input,select{font:inherit}
button,.button{background:#1d4ed8;color:#fff;border:0;border-radius:.3rem;padding:.4rem .8rem;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:#374151}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
input,select{padding:.35rem .5rem;border:1px solid #6b7280;border-radius:.3rem;background:#fff;color:#111827}
form.inline{display:inline}
.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin:0 0 1rem}
.filters label{display:flex;flex-direction:column;font-size:.9rem}
.state-passing{color:#166534;font-weight:600}.state-degraded{color:#92400e;font-weight:600}.state-failing{color:#b91c1c;font-weight:600}.state-unknown,.state-paused{color:#4b5563}
.muted{color:#4b5563}
.error{background:#fee2e2;color:#7f1d1d;border:1px solid #fca5a5;padding:.5rem .75rem;border-radius:.3rem}
.login{max-width:26rem;margin:3rem auto;background:#fff;border:1px solid #d1d5db;border-radius:.5rem;padding:1.5rem}
.login label{display:block;margin:0 0 .25rem;font-weight:600}
.login input{width:100%;margin:0 0 1rem}
#chart{background:#fff;border:1px solid #d1d5db;min-height:270px;padding:.25rem}
.figures{display:flex;flex-wrap:wrap;gap:1rem;margin:0 0 1rem;padding:0;list-style:none}
.figures li{background:#fff;border:1px solid #d1d5db;border-radius:.4rem;padding:.5rem .8rem}
.figures strong{display:block;font-size:1.15rem}
`

export const ASSETS: Record<string, { type: string; body: () => string }> = {
  'uplot.js': { type: 'text/javascript; charset=utf-8', body: uplotFile('uPlot.iife.min.js') },
  'uplot.css': { type: 'text/css; charset=utf-8', body: uplotFile('uPlot.min.css') },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: () => DASHBOARD_JS },
  'dashboard.css': { type: 'text/css; charset=utf-8', body: () => DASHBOARD_CSS },
}
