/** How a queued ticket is doing, and which ticket Redis grants next (the turn scripts' grant rule). */
import type { ChatSnapshot, TicketSnapshot } from '../decode.js'
import { fmtMs, type Liveness } from './liveness.js'

/** A queued ticket: its replica beats (alive), is gone (dead), restarted (stale), or stopped polling (expired). */
export type TicketState = 'alive' | 'dead' | 'stale' | 'expired'

export function ticketState(t: TicketSnapshot, live: Liveness, nowMs: number): TicketState {
  const s = live.status(t)
  if (s !== 'alive') return s
  return t.deadlineMs <= nowMs ? 'expired' : 'alive'
}

/** Why a ticket is not alive, in words. */
export function ticketReason(t: TicketSnapshot, state: TicketState, nowMs: number): string {
  switch (state) {
    case 'dead':
      return `its replica ${t.replicaId} has no heartbeat`
    case 'stale':
      return `it belongs to an earlier incarnation ${t.incarnation.slice(0, 8)} of ${t.replicaId} (restarted)`
    case 'expired':
      return `its replica ${t.replicaId} stopped polling it ${fmtMs(nowMs - t.deadlineMs)} ago`
    default:
      return `${t.replicaId} polls it`
  }
}

/**
 * The ticket Redis grants next, by the grant rule of the turn scripts (`grant_next`): nobody while a
 * holder's lease runs (unless it is revoked); then the oldest ticket whose deadline has not passed —
 * skipping, when the holder's lease ran out unrenewed, that holder's own tickets. `except`: a ticket
 * about to be dropped.
 */
export function nextGrant(chat: ChatSnapshot, nowMs: number, o: { revokeHolder?: boolean; except?: number } = {}): TicketSnapshot | null {
  const h = chat.holder
  if (h && !o.revokeHolder && h.expiresAtMs > nowMs) return null
  const deadIncarnation = h && !o.revokeHolder ? h.incarnation : null
  return chat.tickets.find((t) => t.ticket !== o.except && grantable(t, nowMs, deadIncarnation)) ?? null
}

/**
 * The grant rule for one queued ticket, as `grant_next` (lua/includes/turn.lua) applies it: it is
 * granted when it is live — its deadline, the later of its own and its incarnation's `w:` field, has
 * not passed — and is not a ticket of `deadIncarnation`, the holder whose lease ran out unrenewed. The
 * memory hub grants by it and the views predict by it; the contract suites tie both to the Lua.
 */
export function grantable(t: { incarnation: string; deadlineMs: number }, nowMs: number, deadIncarnation: string | null): boolean {
  return t.incarnation !== deadIncarnation && t.deadlineMs > nowMs
}
