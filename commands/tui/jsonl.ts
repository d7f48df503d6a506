/**
 * `watch --jsonl`: the dashboard's data for pipes — one JSON object per refresh, on the same bounded
 * read and the same reconnecting client as the screen. Its arrays hold the same objects as the
 * listings' JSON (`replicas ls`, `provider ls`, `chat ls`, `leases ls`, `events`): one schema per kind.
 * A failed refresh is one line on stderr; the loop keeps going.
 */
import { SCHEMA_VERSION, chatRow, leadRow, leaseRows, liveness, replicaRow, type DashboardSnapshot } from '../lib.js'
import { eventRowOf } from '../output/events.js'
import { describeError } from '../output/errors.js'
import { sleep } from '../duration.js'
import type { DashboardSource } from './source.js'

export interface JsonlOptions {
  intervalMs: number
  /** Stop after this many snapshots (default: until interrupted). */
  count?: number
  out?: NodeJS.WritableStream
  err?: (line: string) => void
  /** Stop when any of them aborts (Ctrl-C, a closed stdout). */
  signals?: AbortSignal[]
}

/** One snapshot as written: stable field names, Redis's clock, the dashboard's own load. */
export function snapshotRecord(
  source: Pick<DashboardSource, 'url' | 'prefix' | 'layout'>,
  snap: DashboardSnapshot,
  extra: { seq: number; intervalMs: number; commandsPerSec: number | null },
) {
  const now = snap.nowMs
  const live = liveness(snap.replicas, now)
  return {
    schemaVersion: SCHEMA_VERSION,
    kind: 'dashboard',
    seq: extra.seq,
    url: source.url,
    prefix: source.prefix,
    layout: source.layout,
    redisTimeMs: now,
    connection: 'ok',
    intervalMs: extra.intervalMs,
    commandsPerSec: extra.commandsPerSec,
    nowMs: now,
    commands: snap.commands,
    replicas: snap.replicas.map((r) => replicaRow(r, now)),
    providers: snap.providers.map((l) => leadRow(l, snap.replicas, now)),
    // The dashboard's pick (the stuck first, then the busiest): chat rows, with why each looks stuck.
    chats: snap.chats.map((c) => ({ ...chatRow(c.chat, live, now, c.health), stuck: c.stuck, checkpoint: c.checkpoint })),
    leases: leaseRows({ chats: snap.chats.map((c) => c.chat), leads: snap.providers, locks: [], replicas: snap.replicas }, now).sort(
      (a, b) => a.expiresInMs - b.expiresInMs,
    ),
    events: snap.events.map(eventRowOf),
    corrupt: snap.corrupt,
  }
}

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
    while (!closed && !o.signals?.some((s) => s.aborted) && (o.count === undefined || written < o.count)) {
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
      await sleep(Math.max(0, o.intervalMs - (performance.now() - started)), ...(o.signals ?? []))
    }
  } finally {
    out.off('error', onError)
  }
  return written
}
