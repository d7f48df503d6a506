/** How a lease is doing: a chat turn or a lead (renewed by a replica), or a lock (held until it expires). */
import type { Holder } from '../../wire/types.js'
import { ageMs, fmtMs, isLate, renewalOverdue, type Liveness } from './liveness.js'

/**
 * A lease (a chat turn or a lead; locks have no recorded renewal): `ok`, `late` (its holder's last
 * renewal is overdue past the margin: frozen or partitioned), `expired` (Redis no longer honours it;
 * the next poll or candidate takes it), `dead` (its holder has no heartbeat but the lease runs on:
 * a zombie), `stale` (the holder restarted: another incarnation beats). A lock whose owner is no
 * live replica is `ok` until it expires (its holder is unknown, not dead).
 */
export type LeaseState = 'ok' | 'late' | 'expired' | 'dead' | 'stale'

export interface LeaseHealth {
  state: LeaseState
  reason: string
  expiresInMs: number
  lastRenewalAgoMs: number | null
  /** The holder's renewal interval (null: unknown — a lock, or a holder without heartbeat). */
  renewMs: number | null
  /** How far the last renewal is past the interval (null: unknown). */
  renewalOverdueMs: number | null
  /** Is the holder's incarnation beating? null: unknown (a lock whose owner is no replica). */
  holderAlive: boolean | null
}

/** What a lease needs to be judged: its holder, expiry and last renewal (0: not recorded). */
export interface LeaseFacts extends Holder {
  expiresAtMs: number
  lastRenewalMs: number
}

/** How a chat turn's lease reads in a reason (every view of a turn passes these). */
export const TURN_WORDS = {
  lease: "the turn's lease",
  next: "the next waiter's poll takes the turn over, or the chat's next message gets it at once",
} as const
/** How a lead's lease reads in a reason. */
export const LEAD_WORDS = { role: 'leader', lease: 'the lead', next: 'the next candidate takes it over at its next try' } as const

/**
 * A chat turn's or a lead's lease. `words`, so one judgement reads right for either: `role`, who
 * holds it (`holder`, `leader`); `lease`, what runs on (`the turn's lease`); `next`, what happens to
 * it once expired (`taken over at the next waiter's poll…`).
 */
export function leaseHealth(
  l: LeaseFacts,
  live: Liveness,
  nowMs: number,
  words: { role?: string; lease?: string; next?: string } = {},
): LeaseHealth {
  const role = words.role ?? 'holder'
  const lease = words.lease ?? 'the lease'
  const expiresInMs = l.expiresAtMs - nowMs
  const status = live.status(l)
  const renewMs =
    live.renewMs(l) ?? (l.lastRenewalMs && l.expiresAtMs > l.lastRenewalMs ? Math.floor((l.expiresAtMs - l.lastRenewalMs) / 3) : null)
  const age = l.lastRenewalMs ? ageMs(nowMs, l.lastRenewalMs) : null
  const overdue = age !== null && renewMs !== null ? renewalOverdue(age, renewMs) : null
  // One object per lease (a listing judges 100,000 of them): the same fields, in the same order, whatever the state.
  const health = (state: LeaseState, reason: string): LeaseHealth => ({
    expiresInMs,
    lastRenewalAgoMs: age,
    renewMs,
    renewalOverdueMs: overdue,
    holderAlive: status === 'alive',
    state,
    reason,
  })
  if (expiresInMs <= 0) {
    // An expired lease is not held, whatever the record still says: Redis gives it to the next taker.
    return health(
      'expired',
      `not held: the ${role} ${l.replicaId}'s lease expired ${fmtMs(-expiresInMs)} ago (${status === 'alive' ? 'its replica beats but did not renew it: frozen, or lost it' : 'its replica has no heartbeat'}); ${words.next ?? 'the next taker gets it at once'}`,
    )
  }
  if (status === 'stale') {
    return health(
      'stale',
      `the ${role} ${l.replicaId} restarted (its incarnation ${l.incarnation.slice(0, 8)} no longer beats) but ${lease} runs ${fmtMs(expiresInMs)} more`,
    )
  }
  if (status === 'dead') {
    return health('dead', `the ${role} ${l.replicaId} has no heartbeat (dead or cut off) but ${lease} runs ${fmtMs(expiresInMs)} more`)
  }
  if (age !== null && renewMs !== null && isLate(age, renewMs)) {
    return health(
      'late',
      `${role} ${l.replicaId} has not renewed for ${fmtMs(age)} (every ${fmtMs(renewMs)}): frozen or partitioned; its lease ends in ${fmtMs(expiresInMs)}`,
    )
  }
  return health(
    'ok',
    `${role} ${l.replicaId} renews (${age === null ? 'not yet renewed' : `last ${fmtMs(age)} ago`}); ${lease} ends in ${fmtMs(expiresInMs)}`,
  )
}

/** A lock: held until it expires; its owner is a host:pid, a live replica's when one matches. */
export function lockHealth(l: { owner: string; expiresAtMs: number }, live: Liveness, nowMs: number): LeaseHealth {
  const expiresInMs = l.expiresAtMs - nowMs
  const r = live.byOwner(l.owner)
  const base = { expiresInMs, lastRenewalAgoMs: null, renewMs: null, renewalOverdueMs: null, holderAlive: r ? true : null }
  return expiresInMs <= 0
    ? { ...base, state: 'expired', reason: `the lock of ${l.owner} expired ${fmtMs(-expiresInMs)} ago` }
    : { ...base, state: 'ok', reason: `held by ${l.owner} for ${fmtMs(expiresInMs)} more` }
}
