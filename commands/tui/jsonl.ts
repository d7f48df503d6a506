/**
 * `watch --jsonl`: the dashboard's data for pipes — one JSON object per refresh (the
 * DashboardSnapshot plus the header's fields), on the same bounded read and the same reconnecting
 * client as the screen. A failed refresh is one line on stderr; the loop keeps going.
 */
import { SCHEMA_VERSION, type DashboardSnapshot } from '../lib.js'
import { describeError } from '../output/errors.js'
import type { DashboardSource } from './source.js'

export interface JsonlOptions {
  intervalMs: number
  /** Stop after this many snapshots (default: until interrupted). */
  count?: number
  out?: NodeJS.WritableStream
  err?: (line: string) => void
  signal?: AbortSignal
}

/** One snapshot as written: stable field names, Redis's clock, the dashboard's own load. */
export function snapshotRecord(
  source: Pick<DashboardSource, 'url' | 'prefix' | 'layout'>,
  snap: DashboardSnapshot,
  extra: { seq: number; intervalMs: number; commandsPerSec: number | null },
) {
  return {
    schemaVersion: SCHEMA_VERSION,
    kind: 'dashboard',
    seq: extra.seq,
    url: source.url,
    prefix: source.prefix,
    layout: source.layout,
    redisTimeMs: snap.nowMs,
    connection: 'ok',
    intervalMs: extra.intervalMs,
    commandsPerSec: extra.commandsPerSec,
    ...snap,
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true })
  })

/** Write snapshots until `count`, an abort, or a closed pipe (`| head -1`). Returns how many were written. */
export async function runJsonl(source: DashboardSource, o: JsonlOptions): Promise<number> {
  const out = o.out ?? process.stdout
  const err = o.err ?? ((l: string) => process.stderr.write(`${l}\n`))
  let closed = false
  const onError = () => (closed = true)
  out.on('error', onError)
  let written = 0
  let last: { at: number; total: number } | null = null
  try {
    while (!closed && !o.signal?.aborted && (o.count === undefined || written < o.count)) {
      const started = performance.now()
      try {
        const snap = await source.read()
        const total = source.commandsTotal()
        const at = performance.now()
        const commandsPerSec = last && at > last.at ? ((total - last.total) * 1000) / (at - last.at) : null
        last = { at, total }
        written++
        const line = `${JSON.stringify(snapshotRecord(source, snap, { seq: written, intervalMs: o.intervalMs, commandsPerSec }))}\n`
        if (!out.write(line)) await new Promise<void>((r) => (closed ? r() : out.once('drain', () => r())))
      } catch (e) {
        err(`botmesh-coord: watch: ${describeError(e).line} (retrying)`)
      }
      if (o.count !== undefined && written >= o.count) break
      await sleep(Math.max(0, o.intervalMs - (performance.now() - started)), o.signal)
    }
  } finally {
    out.off('error', onError)
  }
  return written
}
