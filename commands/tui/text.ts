/**
 * Small pure text helpers for the dashboard: fixed-width cells, bars, short durations.
 * Widths are in terminal columns (wide characters and emoji of keys count two); the strings are
 * already shown escaped by the dashboard's source (safe-source.ts).
 */
import { columns } from '../output/safe-text.js'

// The dashboard's time text lives with every other command's (one time-text module).
export { countdown, sinceNow as ago, leftMs as left, durOrDash as dur } from '../output/time.js'

/** Cut to `width` columns, marking the cut with an ellipsis. */
export function truncate(s: string, width: number): string {
  if (width <= 0) return ''
  if (s.length <= width && columns(s) <= width) return s
  if (width === 1) return '…'
  let out = ''
  let used = 0
  for (const ch of s) {
    const w = columns(ch)
    if (used + w > width - 1) break
    out += ch
    used += w
  }
  return `${out}…`
}

/** Truncate, then pad to exactly `width` columns. */
export function cell(s: string, width: number, align: 'left' | 'right' = 'left'): string {
  const t = truncate(s, width)
  const pad = ' '.repeat(Math.max(0, width - columns(t)))
  return align === 'right' ? pad + t : t + pad
}

/** A bar of `width` cells filled to `fraction` (clamped to 0..1). */
export function bar(fraction: number, width: number): string {
  if (width <= 0) return ''
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 1
  const full = Math.round(f * width)
  return '█'.repeat(full) + '░'.repeat(width - full)
}

/** The first 8 characters of an incarnation (as `replicas ls` shows it). */
export function shortInc(incarnation: string): string {
  return incarnation.slice(0, 8)
}

/** Redis's clock as HH:MM:SS UTC. */
export function clock(ms: number): string {
  if (!ms) return '--:--:--'
  return new Date(ms).toISOString().slice(11, 19)
}

/** Fences are 16-digit numbers: keep the last `n` digits where room is short, marked with '…'. */
export function fenceText(fence: number | null, width = 16): string {
  if (fence === null) return '-'
  const s = String(fence)
  return s.length <= width ? s : `…${s.slice(s.length - width + 1)}`
}

/** Per-second rate from two counter samples; null without a usable earlier sample. */
export function ratePerSec(now: number, before: number | undefined, elapsedMs: number): number | null {
  if (before === undefined || elapsedMs <= 0 || now < before) return null
  return ((now - before) * 1000) / elapsedMs
}

export function rateText(r: number | null): string {
  if (r === null) return '-'
  if (r === 0) return '0'
  return r < 10 ? r.toFixed(1) : String(Math.round(r))
}
