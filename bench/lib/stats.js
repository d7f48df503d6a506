// Small pure helpers: quantiles, INFO parsing, commandstats deltas, order inversions.
import { rng } from '../../chaos/rng.mjs'
import { now } from '../../chaos/clock.mjs'

export function quantile(sorted, q) {
  if (!sorted.length) return null
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[i]
}

export function summarize(values) {
  const s = Float64Array.from(values).sort()
  if (!s.length) return { n: 0, p50: null, p99: null, max: null, mean: null }
  let sum = 0
  for (const v of s) sum += v
  return { n: s.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1], mean: sum / s.length }
}

export function parseInfo(text) {
  const out = {}
  for (const line of String(text).split(/\r?\n/)) {
    const i = line.indexOf(':')
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1).trim()
  }
  return out
}

/** INFO commandstats → { command: calls } */
export function parseCommandStats(text) {
  const out = {}
  for (const [k, v] of Object.entries(parseInfo(text))) {
    if (!k.startsWith('cmdstat_')) continue
    const m = /calls=(\d+)/.exec(v)
    if (m) out[k.slice(8)] = Number(m[1])
  }
  return out
}

export function addStats(a, b) {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

/**
 * after - before, minus the INFO calls this harness made itself (`ownInfo`, default 1: the "before"
 * snapshot is counted once the command has run, so it shows up in "after").
 */
export function diffStats(before, after, ownInfo = 1) {
  const out = {}
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0) - (k === 'info' ? ownInfo : 0)
    if (d > 0) out[k] = d
  }
  return out
}

export const total = (stats) => Object.values(stats).reduce((a, b) => a + b, 0)

/** Number of inverted pairs (i < j, a[i] > a[j]) by merge sort. */
export function inversions(arr) {
  const a = Array.from(arr)
  const tmp = new Array(a.length)
  let count = 0
  const sort = (lo, hi) => {
    if (hi - lo < 2) return
    const mid = (lo + hi) >> 1
    sort(lo, mid)
    sort(mid, hi)
    let i = lo,
      j = mid,
      k = lo
    while (i < mid && j < hi) {
      if (a[i] <= a[j]) tmp[k++] = a[i++]
      else {
        tmp[k++] = a[j++]
        count += mid - i
      }
    }
    while (i < mid) tmp[k++] = a[i++]
    while (j < hi) tmp[k++] = a[j++]
    for (let x = lo; x < hi; x++) a[x] = tmp[x]
  }
  sort(0, a.length)
  return count
}

/** A monotonic clock shared by every process on this machine (CLOCK_MONOTONIC), in ms: the fault campaign's. */
export const sharedNow = now

/** mulberry32, the fault campaign's seeded PRNG (chaos/rng.mjs). */
export const mulberry32 = (seed) => rng(seed).next

export const round = (v, d = 2) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 10 ** d) / 10 ** d)

/** The median (the mean of the middle two for an even count). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Counts of events that must be zero in every run: summed over the runs, never a median. */
const SUMMED = new Set(['messages', 'overlaps', 'outOfOrder', 'invertedPairs', 'fenceRegressions', 'errors'])
/** The figures shown with their range (min–max over the runs) beside the median. */
export const RANGED = ['msgPerS', 'redisCpuUsPerMsg', 'nodeCpuUsPerMsg', 'roundTripsPerMsg', 'serverCommandsPerMsg', 'holdBoundPct']

/**
 * One scenario run `runs.length` times → one row: the median of every figure (of each field of the
 * latency summaries too, except `max`: the largest of the runs), the event counts summed, and for
 * the RANGED figures their range over the runs. The runs themselves are kept under `runs`.
 */
export function aggregateRuns(runs) {
  if (runs.length === 1) return { ...runs[0], repeats: 1 }
  const first = runs[0]
  const out = { repeats: runs.length }
  for (const [k, v] of Object.entries(first)) {
    const all = runs.map((r) => r[k])
    if (SUMMED.has(k)) out[k] = all.reduce((a, b) => a + (b ?? 0), 0)
    else if (typeof v === 'number') out[k] = round(median(all.filter((x) => typeof x === 'number')), 3)
    else if (v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => x === null || typeof x === 'number')) {
      const sub = {}
      for (const f of Object.keys(v)) {
        const xs = all.map((r) => r?.[f]).filter((x) => typeof x === 'number')
        sub[f] = xs.length === 0 ? null : f === 'max' ? Math.max(...xs) : round(median(xs), 3)
      }
      out[k] = sub
    } else if (Array.isArray(v)) out[k] = all.flat().slice(0, Math.max(3, v.length))
    else out[k] = v
  }
  out.range = {}
  for (const k of RANGED) {
    const xs = runs.map((r) => r[k]).filter((x) => typeof x === 'number')
    if (xs.length) out.range[k] = [Math.min(...xs), Math.max(...xs)]
  }
  out.runs = runs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'clientCommands' && k !== 'serverCommands')))
  return out
}
