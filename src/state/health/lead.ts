/** How a lead (a provider's, a scheduler's, any tryLead name) is doing: its leader's lease and transport. */
import type { LeadSnapshot } from '../decode.js'
import { LEAD_WORDS, leaseHealth, type LeaseHealth } from './lease.js'
import { ageMs, fmtMs, type Liveness } from './liveness.js'

/**
 * A lead: `ok` (a leader renews), `down` (a leader renews but has recorded its transport closed: it
 * yields at `yieldsAt` unless the transport comes back), `late` (the leader is late to renew),
 * `dead`/`stale` (the leader's heartbeat is gone or it restarted, the lease runs on), `expired` (the
 * lease ran out, not yet taken over), `vacant` (nobody leads). A lease problem outranks `down`.
 */
export type LeadState = 'ok' | 'down' | 'late' | 'dead' | 'stale' | 'expired' | 'vacant'

/** The leader's transport while it is down: for how long, how long it yields after, and when (ms from now, ≥ 0). */
export interface TransportDown {
  downForMs: number
  yieldAfterMs: number
  yieldsInMs: number
}

export interface LeadHealth {
  state: LeadState
  reason: string
  leader: LeaseHealth | null
  vacantForMs: number | null
  leadingForMs: number | null
  /** null: the leader's transport is up (or it never said otherwise), or nobody leads. */
  transportDown: TransportDown | null
}

/** `transport down 35s (yields at 1m)`: how long down, and the down time at which the leader yields. */
export function transportDownText(t: TransportDown): string {
  return `transport down ${fmtMs(t.downForMs)} (yields at ${fmtMs(t.yieldAfterMs)})`
}

export function leadHealth(l: LeadSnapshot, live: Liveness, nowMs: number): LeadHealth {
  const h = l.holder
  if (!h) {
    const vacantForMs = l.releasedAtMs ? nowMs - l.releasedAtMs : null
    const standing = l.candidates.filter((c) => c.deadlineMs > nowMs && live.isAlive(c)).length
    return {
      state: 'vacant',
      reason: `nobody leads ${l.key}${vacantForMs === null ? '' : ` (for ${fmtMs(vacantForMs)})`}; ${standing ? `${standing} replica(s) stand for it` : 'no live replica stands for it'}`,
      leader: null,
      vacantForMs,
      leadingForMs: null,
      transportDown: null,
    }
  }
  const leader = leaseHealth(h, live, nowMs, LEAD_WORDS)
  const t = l.transportDown
  const transportDown: TransportDown | null = t
    ? {
        downForMs: ageMs(nowMs, t.sinceMs),
        yieldAfterMs: Math.max(0, t.yieldsAtMs - t.sinceMs),
        yieldsInMs: Math.max(0, t.yieldsAtMs - nowMs),
      }
    : null
  const base = { leader, vacantForMs: null, leadingForMs: h.sinceMs ? nowMs - h.sinceMs : null, transportDown }
  if (transportDown && leader.state === 'ok') {
    return {
      ...base,
      state: 'down',
      reason: `${h.replicaId} leads ${l.key} but its ${transportDownText(transportDown)}: nothing is sent or received on it; ${
        transportDown.yieldsInMs > 0
          ? `it yields in ${fmtMs(transportDown.yieldsInMs)} unless the transport comes back`
          : 'it is yielding now'
      }`,
    }
  }
  return { ...base, state: leader.state, reason: leader.reason }
}
