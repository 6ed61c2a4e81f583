import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { CHECK_COLUMNS, GROUP_COLUMNS, MEMBER_COLUMNS } from './dashboard.js'

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

/**
 * The dashboard's script (no inline script: the content policy allows scripts from the server only).
 * - The response-time chart, drawn from the JSON the page embeds (`#chart-data`; the results
 *   table stays the text version): a line per location, and each failed run marked in red (a
 *   dashed line at its time and a triangle on top, a point at its response time when it has one;
 *   `data-failed-marks` on #chart counts the marks drawn).
 * - The refresh of a page with a refresh bar (`[data-refresh]`, see refresh.ts): its own address
 *   fetched once per interval, the next one only after the answer (no pile-up while the server is
 *   slow), none while the tab is hidden; the new <main> replaces the old (no reload: no flash, the
 *   scroll position and focus kept). It waits while a form control inside has focus (a filter
 *   being chosen). A page that is gone or a session that ended (no bar in the answer) is loaded
 *   once, as the browser would; a network error or a 5xx is said in the bar and tried again.
 */
const DASHBOARD_JS = `(function () {
  'use strict'
  var FAILED = '#dc2626'
  var colors = ['#2563eb', '#16a34a', '#9333ea', '#0891b2', '#4d7c0f', '#854d0e', '#475569', '#4338ca']
  var plot = null

  function chartWidth(target) { return Math.max(280, target.clientWidth) }

  function markFailures(u, target, failed) {
    var ctx = u.ctx, box = u.bbox, ratio = window.devicePixelRatio || 1, drawn = 0
    ctx.save()
    ctx.strokeStyle = FAILED
    ctx.fillStyle = FAILED
    ctx.lineWidth = ratio
    failed.forEach(function (f) {
      var x = Math.round(u.valToPos(f.x, 'x', true))
      if (!(x >= box.left && x <= box.left + box.width)) return
      ctx.setLineDash([4 * ratio, 3 * ratio])
      ctx.beginPath()
      ctx.moveTo(x, box.top)
      ctx.lineTo(x, box.top + box.height)
      ctx.stroke()
      ctx.setLineDash([])
      ctx.beginPath()
      ctx.moveTo(x - 6 * ratio, box.top)
      ctx.lineTo(x + 6 * ratio, box.top)
      ctx.lineTo(x, box.top + 9 * ratio)
      ctx.closePath()
      ctx.fill()
      drawn++
    })
    ctx.restore()
    target.setAttribute('data-failed-marks', String(drawn))
  }

  function drawChart() {
    if (plot) { plot.destroy(); plot = null }
    var data = document.getElementById('chart-data')
    var target = document.getElementById('chart')
    if (!data || !target || typeof uPlot !== 'function') return
    var chart = JSON.parse(data.textContent)
    if (!chart.x.length) return
    var failed = chart.failed || []
    var index = {}
    chart.x.forEach(function (x, i) { index[x] = i })
    var failedAt = {}
    var failedValues = chart.x.map(function () { return null })
    failed.forEach(function (f) {
      var i = index[f.x]
      ;(failedAt[i] = failedAt[i] || []).push(f)
      if (f.responseTime !== null && failedValues[i] === null) failedValues[i] = f.responseTime
    })
    var ms = function (v) { return v == null ? '–' : Math.round(v) + ' ms' }
    var series = [{ label: 'time' }].concat(chart.series.map(function (s, i) {
      return { label: s.label, stroke: colors[i % colors.length], width: 2, spanGaps: true, points: { show: true, size: 5 }, value: function (u, v) { return ms(v) } }
    }))
    var values = [chart.x].concat(chart.series.map(function (s) { return s.values }))
    if (failed.length) {
      series.push({
        label: 'Failed run', stroke: FAILED, width: 0, paths: function () { return null },
        points: { show: true, size: 11, space: 0, width: 2, stroke: '#7f1d1d', fill: FAILED },
        value: function (u, v, s, i) {
          var here = i == null ? null : failedAt[i]
          return here ? here.map(function (f) { return f.location + ' ' + f.status + (f.responseTime === null ? '' : ' ' + ms(f.responseTime)) }).join(', ') : '–'
        },
      })
      values.push(failedValues)
    }
    var opts = {
      width: chartWidth(target),
      height: 260,
      series: series,
      axes: [{}, { label: 'ms', values: function (u, vals) { return vals.map(function (v) { return v + ' ms' }) } }],
      scales: { x: { time: true } },
      hooks: { draw: [function (u) { markFailures(u, target, failed) }] },
    }
    plot = new uPlot(opts, values, target)
    target.setAttribute('data-drawn', 'true')
  }

  window.addEventListener('resize', function () {
    var target = document.getElementById('chart')
    if (plot && target) plot.setSize({ width: chartWidth(target), height: 260 })
  })

  /** What the focused element is, to focus its like again in the new page. */
  function focusKey(main) {
    var el = document.activeElement
    if (!el || el === document.body || !main.contains(el)) return null
    return { tag: el.tagName, id: el.id, href: el.getAttribute('href'), text: el.textContent }
  }

  function refocus(main, key) {
    if (key.id) { var byId = document.getElementById(key.id); if (byId) return byId.focus({ preventScroll: true }) }
    var same = Array.prototype.filter.call(main.getElementsByTagName(key.tag), function (el) {
      return el.getAttribute('href') === key.href && el.textContent === key.text
    })
    if (same.length) same[0].focus({ preventScroll: true })
  }

  function refresher() {
    var bar = document.querySelector('main [data-refresh]')
    var seconds = bar ? Number(bar.getAttribute('data-refresh')) : NaN
    if (!(seconds > 0)) return
    var due = false

    function later() { setTimeout(tick, seconds * 1000) }

    function choosing() {
      var el = document.activeElement
      return !!el && /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName) && document.querySelector('main').contains(el)
    }

    function failedNow() {
      var note = document.querySelector('main [data-refresh-note]')
      if (note) note.textContent = 'could not update at ' + new Date().toISOString().slice(11, 19) + ' UTC, trying again every ' + seconds + ' s'
    }

    function swap(fresh) {
      var main = document.querySelector('main')
      var key = focusKey(main)
      var x = window.scrollX, y = window.scrollY
      main.innerHTML = fresh.innerHTML
      drawChart()
      if (key) refocus(main, key)
      window.scrollTo(x, y)
    }

    function tick() {
      if (document.hidden) { due = true; return }
      if (choosing()) { later(); return }
      fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'text/html' } })
        .then(function (answer) {
          if (answer.status >= 500) throw new Error('status ' + answer.status)
          return answer.text()
        })
        .then(function (text) {
          var fresh = new DOMParser().parseFromString(text, 'text/html').querySelector('main')
          if (!fresh || !fresh.querySelector('[data-refresh]')) { location.reload(); return }
          swap(fresh)
          later()
        })
        .catch(function () { failedNow(); later() })
    }

    document.addEventListener('visibilitychange', function () {
      if (!document.hidden && due) { due = false; tick() }
    })
    later()
  }

  drawChart()
  refresher()
})()
`

/** The labels of a stacked table's cells (a narrow screen shows each row as a card), from its columns. */
function stackedLabels(table: string, columns: string[]): string {
  return columns.map((c, i) => `table.${table} td:nth-child(${i + 1})::before{content:${JSON.stringify(c)}}`).join('\n')
}

const DASHBOARD_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f6f7f9;color:#1f2937}
a{color:#1d4ed8}
header{background:#111827;color:#fff}
header .wrap{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem}
header a{color:#e5e7eb}
.brand{font-weight:600;color:#fff;text-decoration:none}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0}
.wrap{max-width:160rem;margin:0 auto}
main .wrap{padding:1rem 1.5rem}
h1{font-size:1.4rem;margin:.5rem 0 .25rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.refresh{margin:0 0 1rem;font-size:.9rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d1d5db}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f3f4f6;font-weight:600;white-space:nowrap}
td time,time.ago{white-space:nowrap}
tr.failed-run td:first-child{box-shadow:inset 4px 0 0 #dc2626}
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
.failed-key{display:inline-block;width:.8rem;height:.8rem;border-radius:50%;background:#dc2626;vertical-align:-.05rem}
.figures{display:flex;flex-wrap:wrap;gap:1rem;margin:0 0 1rem;padding:0;list-style:none}
.figures li{background:#fff;border:1px solid #d1d5db;border-radius:.4rem;padding:.5rem .8rem}
.figures strong{display:block;font-size:1.15rem}
@media (max-width:47.99rem){
main .wrap{padding:1rem}
table.stack{border:0;background:none}
table.stack caption{display:block;padding:.3rem 0}
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
table.stack tr{background:#fff;border:1px solid #d1d5db;border-radius:.4rem;margin:0 0 .6rem;padding:.35rem 0}
table.stack td{display:flow-root;border:0;padding:.15rem .75rem .15rem 8.25rem;overflow-wrap:anywhere}
table.stack td::before{float:left;width:7rem;margin-left:-7.5rem;font-weight:600;color:#4b5563}
table.stack td[colspan]{padding-left:.75rem}
table.stack td[colspan]::before{content:none}
${stackedLabels('checks', CHECK_COLUMNS)}
${stackedLabels('groups', GROUP_COLUMNS)}
${stackedLabels('members', MEMBER_COLUMNS)}
}
`

export const ASSETS: Record<string, { type: string; body: () => string }> = {
  'uplot.js': { type: 'text/javascript; charset=utf-8', body: uplotFile('uPlot.iife.min.js') },
  'uplot.css': { type: 'text/css; charset=utf-8', body: uplotFile('uPlot.min.css') },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: () => DASHBOARD_JS },
  'dashboard.css': { type: 'text/css; charset=utf-8', body: () => DASHBOARD_CSS },
}
