import { ConfigurationError } from './errors/configuration-error.js'

/** A duration in milliseconds, or a string like `'15s'`, `'250ms'`, `'2m'`, `'1h'`, `'1.5s'`, `'1m30s'`. */
export type Duration = number | string

/** The units a duration may use (case-insensitive): every unit formatDuration prints. */
export const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

export interface ParseDurationOptions {
  /**
   * What a string without a unit means: `'ms'` (the library: a number is milliseconds everywhere) or
   * `'refuse'` (the CLI: `5` could mean anything, so the unit is required). Default `'ms'`.
   */
  bare?: 'ms' | 'refuse'
}

const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/iy

/**
 * Read a duration: a number of milliseconds, or a string of one or more `<number><unit>` parts
 * (`1m30s`, `2h5m`, `1.5s`, `5S`), units ms, s, m, h, d in any case — everything formatDuration prints.
 */
export function parseDuration(value: Duration, what = 'duration', options: ParseDurationOptions = {}): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new ConfigurationError(`${what} must be a non-negative number of milliseconds`)
    return value
  }
  const text = String(value).trim()
  if (/^\d+(\.\d+)?$/.test(text)) {
    if (options.bare === 'refuse' && Number(text) !== 0) {
      throw new ConfigurationError(`${what}: ${text} has no unit: write ${text}ms or ${text}s (units: ms, s, m, h, d)`)
    }
    return Math.round(Number(text))
  }
  let total = 0
  let pos = 0
  PART.lastIndex = 0
  while (pos < text.length) {
    PART.lastIndex = pos
    const m = PART.exec(text)
    if (!m) throw new ConfigurationError(`${what}: cannot read ${JSON.stringify(value)} as a duration (try 500ms, 15s, 2m, 1m30s)`)
    total += Number(m[1]) * DURATION_UNITS[m[2]!.toLowerCase()]!
    pos = PART.lastIndex
    while (text[pos] === ' ') pos++
  }
  if (pos === 0) throw new ConfigurationError(`${what}: cannot read ${JSON.stringify(value)} as a duration (try 500ms, 15s, 2m, 1m30s)`)
  return Math.round(total)
}

/**
 * The longest a Node timer can wait: 2^31 - 1 ms (about 24.8 days). A longer setTimeout fires after
 * 1 ms (with a TimeoutOverflowWarning), so a duration a timer waits is refused above it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** The message for a timer's duration above MAX_TIMER_MS (the library's options and the CLI's say the same). */
export function timerTooLong(what: string, value: Duration): string {
  return `${what}: ${String(value)} is longer than a timer can wait (at most ${MAX_TIMER_MS}ms, about 24d20h)`
}

/** parseDuration for a duration a timer waits (a lease, a poll, a wait, a command's timeout): at most MAX_TIMER_MS. */
export function timerDuration(value: Duration, what = 'duration'): number {
  const ms = parseDuration(value, what)
  if (ms > MAX_TIMER_MS) throw new ConfigurationError(timerTooLong(what, value))
  return ms
}

/** Short human form: 850ms, 12s, 3m4s, 2h5m. */
export function formatDuration(ms: number): string {
  // Not a duration (NaN, infinite, past 2^53 ms: a corrupt value): shown as '-', never as "NaNd".
  if (!Number.isFinite(ms) || Math.abs(ms) > Number.MAX_SAFE_INTEGER) return '-'
  const neg = ms < 0
  let v = Math.abs(Math.round(ms))
  let out: string
  if (v < 1000) out = `${v}ms`
  else if (v < 60_000) out = `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 100)}s`.replace(/\.0s$/, 's')
  else if (v < 3_600_000) {
    const m = Math.floor(v / 60_000)
    const s = Math.floor((v % 60_000) / 1000)
    out = s ? `${m}m${s}s` : `${m}m`
  } else if (v < 86_400_000) {
    const h = Math.floor(v / 3_600_000)
    const m = Math.floor((v % 3_600_000) / 60_000)
    out = m ? `${h}h${m}m` : `${h}h`
  } else {
    v = Math.floor(v / 3_600_000)
    out = `${Math.floor(v / 24)}d${v % 24 ? `${v % 24}h` : ''}`
  }
  return neg ? `-${out}` : out
}
