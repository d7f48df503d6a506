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
