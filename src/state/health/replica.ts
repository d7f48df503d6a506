/** How a replica is doing, from its heartbeat record or from what still names it without one. */
import type { Holder } from '../../wire/types.js'
import type { ReplicaSnapshot } from '../decode.js'
import { ageMs, fmtMs, isLate, renewIntervalOf, renewalOverdue, type Liveness } from './liveness.js'

/**
 * A replica, from its heartbeat record: `ok` (beating), `late` (its last beat is overdue past the
 * margin), `gone` (its heartbeat expired: the record is kept GONE_KEEP_MS past its last beat, so a
 * replica that froze, was cut off or was killed stays visible, with its last beat and what it held),
 * `evicted` (an operator's tombstone). From what still names it without a heartbeat record: `gone`
 * too (no record at all: its last beat is older than the record is kept) and `stale` (the replicaId
 * beats with another incarnation: an earlier process of a restarted replica).
 *
 * Never `dead`: from Redis alone, a frozen process (a SIGSTOP, a long GC pause, a partition) and a
 * killed one look the same until it beats again. What is known is how long there has been no beat.
 */
export type ReplicaState = 'ok' | 'late' | 'gone' | 'evicted' | 'stale'

/**
 * How long a heartbeat record is kept past its expiry (lua/replica-beat-2.lua sets the record's TTL
 * to leaseMs + this): the window in which `replicas ls` and `doctor` show a replica as `gone`. An
 * orderly stop deletes the record at once.
 */
export const GONE_KEEP_MS = 5 * 60_000

export interface ReplicaHealth {
  state: ReplicaState
  reason: string
  heartbeatAgeMs: number
  renewMs: number
  renewalOverdueMs: number
  expiresInMs: number
}

export function replicaHealth(r: ReplicaSnapshot, nowMs: number): ReplicaHealth {
  const age = ageMs(nowMs, r.beatAtMs)
  const renewMs = renewIntervalOf(r)
  const base = { heartbeatAgeMs: age, renewMs, renewalOverdueMs: renewalOverdue(age, renewMs), expiresInMs: r.expiresAtMs - nowMs }
  if (r.evictedIncarnation && r.evictedIncarnation === r.incarnation) {
    return { ...base, state: 'evicted', reason: absentReplicaReason(r.replicaId, 'evicted') }
  }
  if (r.expiresAtMs <= nowMs) {
    return {
      ...base,
      state: 'gone',
      reason: `no heartbeat from ${r.replicaId} for ${fmtMs(age)} (every ${fmtMs(renewMs)}; it expired ${fmtMs(nowMs - r.expiresAtMs)} ago): frozen, cut off or killed without an orderly stop; it counts as gone, and what it held is not renewed`,
    }
  }
  if (isLate(age, renewMs)) {
    return {
      ...base,
      state: 'late',
      reason: `${r.replicaId} has not beaten for ${fmtMs(age)} (every ${fmtMs(renewMs)}): frozen or partitioned; its heartbeat ends in ${fmtMs(base.expiresInMs)}`,
    }
  }
  return { ...base, state: 'ok', reason: `${r.replicaId} beat ${fmtMs(age)} ago (every ${fmtMs(renewMs)})` }
}

/** The state of what names a replica incarnation that has no heartbeat record of its own. */
export function absentReplicaState(h: Holder, live: Liveness): 'gone' | 'stale' {
  return live.status(h) === 'stale' ? 'stale' : 'gone'
}

/**
 * Why a replica incarnation reads as it does when there is no live heartbeat record to judge it by:
 * `evicted` (an operator's tombstone), `stale` (an earlier process of a restarted replica), `gone`
 * (no record at all). Said here, so `replicas ls --all` and a replica's own evicted record agree.
 */
export function absentReplicaReason(replicaId: string, state: 'evicted' | 'gone' | 'stale'): string {
  if (state === 'evicted') return `${replicaId} was evicted by an operator: its beats are refused`
  if (state === 'stale') return `an earlier incarnation of ${replicaId}, which restarted: what it holds is not renewed`
  return `no heartbeat record of ${replicaId} (its last beat is older than the record is kept, or it never beat under this prefix): what it holds is not renewed`
}
