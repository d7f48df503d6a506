// The open-loop sweep as a chart (docs/openloop.svg), hand-written SVG with no dependencies: turn-wait
// p99 (log scale) and achieved rate against the offered rate, one line per adapter.
import { ADAPTER_LABELS } from '../workers/adapters.js'

const COLORS = { botmesh: '#d62728', redlock: '#1f77b4', semaphore: '#2ca02c', naive: '#9467bd' }
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const fmt = (v) => (v >= 1000 ? `${v / 1000}k` : `${v}`)

export function openLoopChart(ol) {
  const W = 960
  const H = 400
  const pw = 380
  const ph = 260
  const top = 70
  const panels = [70, 70 + pw + 110]
  const rows = ol.rows.filter((r) => r.scenario === 'sweep')
  const rates = [...new Set(rows.map((r) => r.offered))].sort((a, b) => a - b)
  const xMax = Math.max(1, ...rates) * 1.05
  const x = (px, v) => px + (v / xMax) * pw
  const p99s = rows.map((r) => r.waitMs.p99).filter((v) => v > 0)
  const lo = Math.floor(Math.log10(Math.max(0.01, Math.min(...p99s, 1))))
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...p99s, 10))))
  const yLog = (v) => top + ph - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * ph
  const achMax = Math.max(xMax, ...rows.map((r) => r.achievedInWindow)) * 1.02
  const yLin = (v) => top + ph - (v / achMax) * ph
  const S = []
  S.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="15">Open loop: ${ol.config.replicas} replicas, ${ol.config.chats} chats, Poisson bursts of ${ol.config.burst}, handler median ${ol.config.handlerMedianMs} ms</text>`,
  )
  const axes = (px, title, yTicks, yOf, yLabel) => {
    S.push(`<rect x="${px}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`)
    S.push(`<text x="${px + pw / 2}" y="${top - 10}" text-anchor="middle" font-size="13">${esc(title)}</text>`)
    for (const r of rates) {
      S.push(`<line x1="${x(px, r)}" y1="${top + ph}" x2="${x(px, r)}" y2="${top + ph + 4}" stroke="#999"/>`)
      S.push(`<text x="${x(px, r)}" y="${top + ph + 17}" text-anchor="middle">${fmt(r)}</text>`)
    }
    S.push(`<text x="${px + pw / 2}" y="${top + ph + 34}" text-anchor="middle">offered msg/s</text>`)
    for (const t of yTicks) {
      const y = yOf(t)
      S.push(`<line x1="${px}" y1="${y}" x2="${px + pw}" y2="${y}" stroke="#eee"/>`)
      S.push(`<text x="${px - 5}" y="${y + 4}" text-anchor="end">${fmt(t)}</text>`)
    }
    S.push(`<text transform="translate(${px - 48},${top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`)
  }
  const decades = Array.from({ length: hi - lo + 1 }, (_, i) => Number((10 ** (lo + i)).toPrecision(1)))
  axes(panels[0], 'turn wait p99 (log scale)', decades, yLog, 'ms')
  const step = 10 ** Math.floor(Math.log10(achMax / 2))
  const linTicks = []
  for (let v = 0; v <= achMax; v += step * (achMax / step > 8 ? 2 : 1)) linTicks.push(v)
  axes(panels[1], 'achieved rate (completed within the arrival window)', linTicks, yLin, 'msg/s')
  // Offered = achieved, for reference.
  S.push(
    `<line x1="${x(panels[1], 0)}" y1="${yLin(0)}" x2="${x(panels[1], xMax / 1.05)}" y2="${yLin(xMax / 1.05)}" stroke="#bbb" stroke-dasharray="4 4"/>`,
  )
  for (const a of ol.adapters) {
    const mine = rows.filter((r) => r.adapter === a).sort((p, q) => p.offered - q.offered)
    const c = COLORS[a] ?? '#333'
    for (const [px, val, yOf] of [
      [panels[0], (r) => r.waitMs.p99, yLog],
      [panels[1], (r) => r.achievedInWindow, yLin],
    ]) {
      const pts = mine.filter((r) => val(r) !== null).map((r) => `${x(px, r.offered).toFixed(1)},${yOf(val(r)).toFixed(1)}`)
      S.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>`)
      for (const p of pts) S.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${c}"/>`)
    }
  }
  ol.adapters.forEach((a, i) => {
    const lx = 70 + i * 220
    S.push(`<line x1="${lx}" y1="42" x2="${lx + 24}" y2="42" stroke="${COLORS[a] ?? '#333'}" stroke-width="3"/>`)
    S.push(`<text x="${lx + 30}" y="46">${esc(ADAPTER_LABELS[a] ?? a)}</text>`)
  })
  S.push('</svg>')
  return `${S.join('\n')}\n`
}
