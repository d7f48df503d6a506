/**
 * The fields of a chat's state hash P:c:<chat> (docs/redis-layout.md), for TypeScript: the decoder
 * (src/state/decode.ts), the lease listings and the admin's scan read them by these names. The Lua
 * writers name them through CHAT in lua/includes/chat.lua — the same table;
 * test/integration/chat-schema.test.ts checks that the two agree and that every field written decodes.
 */
export const CHAT_FIELDS = {
  /** Last ticket issued. */
  lastTicket: 'n',
  /** Fence of the current (or last) grant. */
  fence: 'f',
  /** Holder's replicaId, incarnation, ticket: only while held. */
  holder: 'h',
  holderIncarnation: 'hi',
  holderTicket: 'ht',
  /** Lease expiry, grant time, last renewal (Redis ms): only while held. */
  expiresAt: 'exp',
  grantedAt: 'g',
  lastRenewal: 'lr',
  /** How long the holder's ticket waited (ms): only while held. */
  waited: 'wt',
  /** The last holder (kept after release). */
  lastHolder: 'lh',
  lastHolderIncarnation: 'lhi',
  /** The holder before the current grant (`previousHolder`). */
  previousHolder: 'ph',
  previousHolderIncarnation: 'phi',
  /** Dead tickets skipped. */
  skipped: 'sk',
  /** `t:<ticket>` = `deadline|enqueuedAt|incarnation|replicaId` of each queued ticket. */
  ticketPrefix: 't:',
  /** `rq:<requestId>` = the ticket one acquisition took (idempotent taking). */
  requestPrefix: 'rq:',
  /** `q:<ticket>` = the request id of the acquisition that took the ticket (whose ticket it is). */
  ticketRequestPrefix: 'q:',
  /** The holder's request id: only while held. */
  holderRequest: 'hq',
  /** '1' while the holder's grant is offered (pushed to its replica, not taken up by its poll yet); '0' once taken up. */
  offered: 'of',
  /**
   * `w:<incarnation>` = Redis ms until which that incarnation's queued tickets here live (its takes
   * and polls set it): a ticket is alive while its own deadline or this one is ahead.
   */
  waiterPrefix: 'w:',
  /**
   * `x:<ticket>` = the incarnation of a ticket skipped as presumed dead (its replica did not poll in
   * time): the poll of that ticket, if it comes, learns it was too late (not an operator's skip).
   */
  presumedDeadPrefix: 'x:',
  /**
   * Redis's clock (µs) when a take first found this state (made it, or found it without one): a
   * waiter's poll names it, so a state made again since its take (lost and rebuilt, however many
   * tickets it has issued) tells a ticket lost with it from one an operator skipped.
   */
  epoch: 'ep',
} as const

const F = CHAT_FIELDS

/** The fields that say who holds a chat (a lease listing reads only these: no tickets). */
export const CHAT_HOLDER_FIELDS: string[] = [
  F.holder,
  F.holderIncarnation,
  F.holderTicket,
  F.fence,
  F.expiresAt,
  F.grantedAt,
  F.lastRenewal,
  F.waited,
  F.lastHolder,
  F.lastHolderIncarnation,
  F.previousHolder,
  F.previousHolderIncarnation,
  F.offered,
]

/** A queued ticket as its `t:<ticket>` field holds it (with its incarnation's `w:` field: see ticketsOf). */
export interface QueuedTicket {
  ticket: number
  /** Redis ms: the ticket is skipped once Redis's clock passes it (its replica stopped polling). */
  deadlineMs: number
  enqueuedAtMs: number
  incarnation: string
  replicaId: string
}

/** The queued ticket of one field of a chat hash; null when the field is not a ticket; throws on a malformed one. */
export function queuedTicket(field: string, value: string, malformed: (why: string) => Error): QueuedTicket | null {
  if (!field.startsWith(F.ticketPrefix)) return null
  const m = /^(\d+)\|(\d+)\|([^|]*)\|([\s\S]*)$/.exec(value)
  const ticket = Number(field.slice(F.ticketPrefix.length))
  const deadlineMs = Number(m?.[1])
  const enqueuedAtMs = Number(m?.[2])
  // Numbers past 2^53 are not exact (nor are they times): a corrupt field, not a ticket.
  if (!m || ![ticket, deadlineMs, enqueuedAtMs].every(Number.isSafeInteger)) throw malformed(`ticket field ${field} is malformed`)
  return { ticket, deadlineMs, enqueuedAtMs, incarnation: m[3]!, replicaId: m[4]! }
}

/**
 * Every queued ticket of a chat hash, in ticket order, each with its deadline as Redis judges it: the
 * later of its own and its incarnation's `w:` field. Throws (`malformed`) on a malformed ticket.
 */
export function ticketsOf(hash: Record<string, string>, malformed: (why: string) => Error): QueuedTicket[] {
  const tickets: QueuedTicket[] = []
  for (const field in hash) {
    const t = queuedTicket(field, hash[field]!, malformed)
    if (!t) continue
    const w = Number(hash[F.waiterPrefix + t.incarnation])
    if (Number.isSafeInteger(w) && w > t.deadlineMs) t.deadlineMs = w
    tickets.push(t)
  }
  if (tickets.length > 1) tickets.sort((a, b) => a.ticket - b.ticket)
  return tickets
}

/** Does this incarnation hold the chat, or wait in its queue? (A malformed ticket is no one's.) */
export function chatInvolves(hash: Record<string, string>, incarnation: string): boolean {
  if (hash[F.holderIncarnation] === incarnation) return true
  return Object.entries(hash).some(([field, value]) => {
    try {
      return queuedTicket(field, value, () => new Error('malformed'))?.incarnation === incarnation
    } catch {
      return false
    }
  })
}
