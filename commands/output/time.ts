import { formatDuration } from '../lib.js'
import type { ChalkInstance } from 'chalk'

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

/** "12s ago" for an age in ms (null: "-"). */
export function agoMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-'
  return ms < 0 ? `in ${formatDuration(-ms)}` : `${formatDuration(ms)} ago`
}

/** "4.2s" for time left in ms; "expired 1s ago" once negative (null: "-"). */
export function leftMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-'
  return ms >= 0 ? formatDuration(ms) : `expired ${formatDuration(-ms)} ago`
}

/** A plain duration, or "-". */
export function dur(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : formatDuration(ms)
}

/**
 * The RENEWED cell of every listing: "2.1s ago", and "8.4s ago late (every 5s)" in yellow when the
 * health model says the renewal is late (the holder is frozen or cut off).
 */
export function renewedText(c: ChalkInstance, state: string | null, ageMs: number | null | undefined, renewMs: number | null): string {
  if (ageMs === null || ageMs === undefined) return '-'
  return state === 'late' ? c.yellow(`${agoMs(ageMs)} late${renewMs ? ` (every ${formatDuration(renewMs)})` : ''}`) : agoMs(ageMs)
}

// ---- the dashboard's forms (commands/tui/text.ts re-exports them under its short names)

/** 850ms, 12s, 3m4s; '-' for null or not a number; a negative time reads 0ms. */
export function durOrDash(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-'
  return formatDuration(Math.max(0, ms))
}

/**
 * "12s ago" / "-" for a Redis-clock time against Redis's now. A time after now is what happened between
 * the read of Redis's clock and the read of the keys (or clock skew between the masters of a Cluster):
 * it happened, so it reads `now`, never "in 57ms".
 */
export function sinceNow(atMs: number | null | undefined, nowMs: number): string {
  if (!atMs) return '-'
  return nowMs > atMs ? `${formatDuration(nowMs - atMs)} ago` : 'now'
}

/** A countdown for narrow columns: "9.8s", or "-1.2s" once expired (Redis has not given it away yet). */
export function countdown(ms: number): string {
  return ms >= 0 ? formatDuration(ms) : `-${formatDuration(-ms)}`
}
