import { ConfigurationError } from './errors/configuration-error.js'

/** A duration in milliseconds, or a string like `'15s'`, `'250ms'`, `'2m'`, `'1h'`, `'1.5s'`. */
export type Duration = number | string

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

export function parseDuration(value: Duration, what = 'duration'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new ConfigurationError(`${what} must be a non-negative number of milliseconds`)
    return value
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(String(value))
  if (!m) throw new ConfigurationError(`${what}: cannot read ${JSON.stringify(value)} as a duration (try 500ms, 15s, 2m)`)
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!)
}

/** Short human form: 850ms, 12s, 3m4s, 2h5m. */
export function formatDuration(ms: number): string {
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
