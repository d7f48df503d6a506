/**
 * Who is alive, and how time reads, for every judgement of the health model: the heartbeat records
 * say which replica incarnations beat and how often they renew; a renewal past its interval plus a
 * margin is late (see ../health.ts for why half an interval).
 */
import type { Holder } from '../../wire/types.js'
import type { ReplicaSnapshot } from '../decode.js'
import { formatDuration } from '../../duration.js'
import { renewIntervalMs } from '../../defaults.js'

/**
 * The age of `atMs` at `nowMs` (both Redis ms), as a number (commands/output/time.ts spells ages as
 * text). A reader reads Redis's clock before it reads the keys: a renewal or grant written in between
 * is later than its now, and counts as just now (0), never as "in 1ms" or held for a negative time.
 */
export function ageMs(nowMs: number, atMs: number): number {
  return Math.max(0, nowMs - atMs)
}

/** The margin past a renewal interval before a renewal counts as late, as a fraction of the interval. */
export const LATE_MARGIN = 0.5

/**
 * How a duration reads in a reason: `850ms`, `1.6s`, `42.3s`, `2m5s` — the CLI's one formatting
 * (formatDuration), so the same interval reads the same in a reason and in a column beside it.
 */
export function fmtMs(ms: number): string {
  return formatDuration(Math.abs(ms))
}

/** The renewal interval a heartbeat record says its replica uses (older records: a third of its lease). */
export function renewIntervalOf(r: ReplicaSnapshot): number {
  const leaseMs = r.info.leaseMs || r.expiresAtMs - r.beatAtMs
  return r.info.renewMs && r.info.renewMs > 0 ? r.info.renewMs : renewIntervalMs(leaseMs)
}

/** How overdue a renewal is: 0 while within its interval, then the time past it. */
export function renewalOverdue(ageMs: number, renewMs: number): number {
  return Math.max(0, ageMs - renewMs)
}

/** Is a renewal this old late for this interval (past the interval plus the margin)? */
export function isLate(ageMs: number, renewMs: number): boolean {
  return ageMs > renewMs * (1 + LATE_MARGIN)
}

/** alive: this exact incarnation beats; dead: no heartbeat (or evicted); stale: the replicaId beats with another incarnation (a restart). */
export type HolderStatus = 'alive' | 'dead' | 'stale'

/** Who is alive, from the heartbeat records (present = alive until its `exp`). */
export interface Liveness {
  /** Is this exact incarnation of this replica beating? */
  isAlive(h: Holder): boolean
  status(h: Holder): HolderStatus
  /** A live replica whose heartbeat says it runs as `host:pid` (a lock's owner). */
  byOwner(owner: string): ReplicaSnapshot | null
  /** The live record of a replicaId. */
  replica(replicaId: string): ReplicaSnapshot | null
  /** The renewal interval of a live holder (from its heartbeat), or null. */
  renewMs(h: Holder): number | null
}

export function liveness(replicas: ReplicaSnapshot[], nowMs: number): Liveness {
  const byId = new Map<string, ReplicaSnapshot>()
  // host:pid → replica; null when several live replicas share it (one process, several coordinators).
  const byOwner = new Map<string, ReplicaSnapshot | null>()
  for (const r of replicas) {
    if (r.expiresAtMs <= nowMs) continue
    byId.set(r.replicaId, r)
    const owner = `${r.info.host}:${r.info.pid}`
    if (r.info.host) byOwner.set(owner, byOwner.has(owner) ? null : r)
  }
  const status = (h: Holder): HolderStatus => {
    const r = byId.get(h.replicaId)
    if (!r) return 'dead'
    if (r.evictedIncarnation && r.evictedIncarnation === h.incarnation) return 'dead'
    return r.incarnation === h.incarnation ? 'alive' : 'stale'
  }
  return {
    isAlive: (h) => status(h) === 'alive',
    status,
    byOwner: (owner) => byOwner.get(owner) ?? null,
    replica: (id) => byId.get(id) ?? null,
    renewMs: (h) => (status(h) === 'alive' ? renewIntervalOf(byId.get(h.replicaId)!) : null),
  }
}
