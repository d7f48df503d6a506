/** The rows of `replicas ls`: each heartbeat record, and the incarnations the store still names without one. */
import type { Holder } from '../../wire/types.js'
import type { ChatSnapshot, LeadSnapshot, ReplicaSnapshot } from '../decode.js'
import { liveness } from '../health/liveness.js'
import { absentReplicaReason, absentReplicaState, replicaHealth, type ReplicaState } from '../health/replica.js'
import { byText } from './shared.js'

export interface ReplicaRow {
  kind: 'replica'
  replicaId: string
  incarnation: string
  state: ReplicaState
  /** Why, in words (health.ts decides). */
  reason: string
  /** null for a replica known only by what still names it (dead, stale) or by its tombstone. */
  heartbeatAgeMs: number | null
  /** How often it beats (and renews its leases). */
  renewMs: number | null
  /** How far its last beat is past that interval (0: on time). */
  renewalOverdueMs: number | null
  expiresInMs: number | null
  host: string | null
  pid: number | null
  version: string | null
  startedAt: number | null
  leaseMs: number | null
  leasesHeld: number
  turnsHeld: number
  leadsHeld: number
  turnsGranted: number | null
  /** Messages it refused at once as 'overloaded' (maxWaiting were waiting); 0 from a record older than the count. */
  turnsShed: number | null
  waitingNow: number | null
  /** How long its longest-waiting message had waited at its last beat (null: none waited, or no record). */
  oldestWaitMs: number | null
  waitP99Ms: number | null
  leasesLost: number | null
  clockSkewMs: number | null
}

export function replicaRow(r: ReplicaSnapshot, nowMs: number): ReplicaRow {
  const health = replicaHealth(r, nowMs)
  return {
    kind: 'replica',
    replicaId: r.replicaId,
    incarnation: r.incarnation,
    state: health.state,
    reason: health.reason,
    heartbeatAgeMs: health.heartbeatAgeMs,
    renewMs: health.renewMs,
    renewalOverdueMs: health.renewalOverdueMs,
    expiresInMs: health.expiresInMs,
    host: r.info.host,
    pid: r.info.pid,
    version: r.info.version,
    startedAt: r.info.startedAt,
    leaseMs: r.info.leaseMs,
    leasesHeld: r.stats.turnsHeld + r.stats.leadsHeld,
    turnsHeld: r.stats.turnsHeld,
    leadsHeld: r.stats.leadsHeld,
    turnsGranted: r.stats.turnsGranted,
    turnsShed: r.stats.turnsShed ?? 0,
    waitingNow: r.stats.waitingNow,
    oldestWaitMs: r.stats.oldestWaitMs ?? null,
    waitP99Ms: r.stats.waitP99Ms,
    leasesLost: r.stats.leasesLost,
    clockSkewMs: r.clockSkewMs,
  }
}

/** What the store still attributes to a replica incarnation: a turn or lead it holds, a ticket it queued. */
export interface ReplicaReference extends Holder {
  what: 'turn' | 'lead' | 'ticket'
}

/** Everything in these chats and leads that names a replica incarnation. */
export function replicaReferences(chats: ChatSnapshot[], leads: LeadSnapshot[]): ReplicaReference[] {
  const out: ReplicaReference[] = []
  for (const c of chats) {
    if (c.holder) out.push({ replicaId: c.holder.replicaId, incarnation: c.holder.incarnation, what: 'turn' })
    for (const t of c.tickets) out.push({ replicaId: t.replicaId, incarnation: t.incarnation, what: 'ticket' })
  }
  for (const l of leads) if (l.holder) out.push({ replicaId: l.holder.replicaId, incarnation: l.holder.incarnation, what: 'lead' })
  return out
}

/** The row of a replica incarnation that has no heartbeat record: evicted (a tombstone), or gone or stale (named by what it holds). */
function absentReplicaRow(replicaId: string, incarnation: string, state: 'evicted' | 'gone' | 'stale'): ReplicaRow {
  return {
    kind: 'replica',
    replicaId,
    incarnation,
    state,
    reason: absentReplicaReason(replicaId, state),
    heartbeatAgeMs: null,
    renewMs: null,
    renewalOverdueMs: null,
    expiresInMs: null,
    host: null,
    pid: null,
    version: null,
    startedAt: null,
    leaseMs: null,
    leasesHeld: 0,
    turnsHeld: 0,
    leadsHeld: 0,
    turnsGranted: null,
    turnsShed: null,
    waitingNow: null,
    oldestWaitMs: null,
    waitP99Ms: null,
    leasesLost: null,
    clockSkewMs: null,
  }
}

/**
 * Every replica: the heartbeat records (live, late, expired), and with `all` also the evicted ones
 * (their tombstones) and the incarnations the store still names that have no live record (dead,
 * stale) — with what they hold, so a zombie's leftovers are visible.
 */
export function replicaRows(
  records: ReplicaSnapshot[],
  nowMs: number,
  extra: { tombstones?: Array<{ replicaId: string; incarnation: string }>; references?: ReplicaReference[] } = {},
): ReplicaRow[] {
  const rows = records.map((r) => replicaRow(r, nowMs))
  const known = new Set(rows.map((r) => `${r.replicaId}\u0000${r.incarnation}`))
  const byKey = new Map<string, ReplicaRow>()
  for (const t of extra.tombstones ?? []) {
    const k = `${t.replicaId}\u0000${t.incarnation}`
    if (!known.has(k) && !byKey.has(k)) byKey.set(k, absentReplicaRow(t.replicaId, t.incarnation, 'evicted'))
  }
  const live = liveness(records, nowMs)
  for (const ref of extra.references ?? []) {
    const k = `${ref.replicaId}\u0000${ref.incarnation}`
    if (known.has(k)) continue
    let row = byKey.get(k)
    if (!row) {
      row = absentReplicaRow(ref.replicaId, ref.incarnation, absentReplicaState(ref, live))
      byKey.set(k, row)
    }
    if (ref.what === 'turn') row.turnsHeld++
    else if (ref.what === 'lead') row.leadsHeld++
    if (ref.what !== 'ticket') row.leasesHeld++
  }
  return [...rows, ...byKey.values()].sort((a, b) => byText(a.replicaId, b.replicaId) || byText(a.incarnation, b.incarnation))
}
