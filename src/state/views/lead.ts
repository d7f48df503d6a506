/**
 * The rows of `provider ls` / `provider status` (and every other lead: schedulers, tryLead names):
 * the leader and its lease as the health model judges them, how the last handover went, who stands by.
 */
import type { Holder } from '../../wire/types.js'
import type { LeadSnapshot, LeaseKindLabel, LetGo, ReplicaSnapshot } from '../decode.js'
import { leadKind } from '../decode.js'
import { leadHealth, type LeadState, type TransportDown } from '../health/lead.js'
import { liveness } from '../health/liveness.js'
import { byText } from './shared.js'

export interface StandbyRow {
  replicaId: string
  incarnation: string
  alive: boolean
  /** Until its candidacy lapses unless refreshed. */
  deadlineInMs: number
}

export interface LeadRow {
  kind: LeaseKindLabel
  key: string
  /** The leader (null: nobody leads). */
  replicaId: string | null
  incarnation: string | null
  fence: number | null
  /** ok, down (the leader's transport is down), late (the leader is late to renew), dead, stale, expired, vacant (health.ts decides). */
  state: LeadState
  reason: string
  expiresInMs: number | null
  holderAlive: boolean | null
  /** Redis ms since the leader leads. */
  sinceMs: number | null
  leadingForMs: number | null
  lastRenewalAgoMs: number | null
  /** The leader's renewal interval, and how far its last renewal is past it. */
  renewMs: number | null
  renewalOverdueMs: number | null
  previousHolder: Holder | null
  lastHolder: Holder | null
  /** Since nobody leads (the last holder let go or expired). */
  vacantForMs: number | null
  /** The leader's transport while down (down for, yields at, yields in), or null (up, or nobody leads). */
  transportDown: TransportDown | null
  /** How long the last handover took (let go → next grant). */
  lastHandoverMs: number | null
  /** How the leader before this one let go: released, yielded, expired, revoked, evicted (null: not recorded). */
  lastHandoverHow: LetGo | null
  /** Who revoked it, or whose yield request it answered. */
  lastHandoverBy: string | null
  /** While nobody leads: how the last leader let go, and by whom. */
  letGoHow: LetGo | null
  letGoBy: string | null
  pendingYield: null | { by: string; target: string | null; expiresInMs: number; requestedAgoMs: number }
  /** Replicas campaigning for it, other than the leader, whose candidacy has not lapsed — among the `candidatesRead`. */
  standbys: StandbyRow[]
  /** Candidacies recorded (lapsed ones and the leader's included), and how many of them were read: fewer when there are many (./bounded.ts). */
  candidates: number
  candidatesRead: number
}

export function leadRow(l: LeadSnapshot, replicas: ReplicaSnapshot[], nowMs: number): LeadRow {
  const live = liveness(replicas, nowMs)
  const h = l.holder
  const y = l.yieldRequest && l.yieldRequest.expiresAtMs > nowMs ? l.yieldRequest : null
  const health = leadHealth(l, live, nowMs)
  const leader = health.leader
  return {
    kind: leadKind(l.key),
    key: l.key,
    replicaId: h?.replicaId ?? null,
    incarnation: h?.incarnation ?? null,
    fence: l.fence,
    state: health.state,
    reason: health.reason,
    expiresInMs: leader ? leader.expiresInMs : null,
    holderAlive: leader ? leader.holderAlive : null,
    sinceMs: h?.sinceMs || null,
    leadingForMs: health.leadingForMs,
    lastRenewalAgoMs: leader ? leader.lastRenewalAgoMs : null,
    renewMs: leader ? leader.renewMs : null,
    renewalOverdueMs: leader ? leader.renewalOverdueMs : null,
    previousHolder: l.previousHolder,
    lastHolder: l.lastHolder,
    vacantForMs: health.vacantForMs,
    transportDown: health.transportDown,
    lastHandoverMs: l.lastHandoverMs,
    lastHandoverHow: l.lastHandoverHow,
    lastHandoverBy: l.lastHandoverBy,
    letGoHow: h ? null : l.letGoHow,
    letGoBy: h ? null : l.letGoBy,
    pendingYield: y
      ? { by: y.by, target: y.target, expiresInMs: y.expiresAtMs - nowMs, requestedAgoMs: y.requestedAtMs ? nowMs - y.requestedAtMs : 0 }
      : null,
    standbys: l.candidates
      .filter((c) => c.incarnation !== h?.incarnation && c.deadlineMs > nowMs)
      .map((c) => ({ replicaId: c.replicaId, incarnation: c.incarnation, alive: live.isAlive(c), deadlineInMs: c.deadlineMs - nowMs })),
    candidates: Math.max(l.candidateCount ?? 0, l.candidates.length),
    candidatesRead: l.candidates.length,
  }
}

export function leadRows(leads: LeadSnapshot[], replicas: ReplicaSnapshot[], nowMs: number, kinds?: LeaseKindLabel[]): LeadRow[] {
  return leads
    .filter((l) => !kinds || kinds.includes(leadKind(l.key)))
    .map((l) => leadRow(l, replicas, nowMs))
    .sort((a, b) => byText(a.key, b.key))
}
