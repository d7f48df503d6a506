import { formatDuration } from '../../src/index.js'

/** "12s ago" for a Redis-clock time in the past, relative to Redis's now. */
export function ago(atMs: number | null | undefined, nowMs: number): string {
  if (atMs === null || atMs === undefined || atMs === 0) return '-'
  const d = nowMs - atMs
  return d < 0 ? `in ${formatDuration(-d)}` : `${formatDuration(d)} ago`
}

/** "in 4.2s" / "expired 1s ago" for a Redis-clock deadline. */
export function left(atMs: number | null | undefined, nowMs: number): string {
  if (atMs === null || atMs === undefined) return '-'
  const d = atMs - nowMs
  return d >= 0 ? formatDuration(d) : `expired ${formatDuration(-d)} ago`
}
