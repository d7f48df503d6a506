/**
 * The shapes that cross the wire between a coordinator and the shared state: what a script (or the
 * memory hub) answers, what a replica writes in its heartbeat record, and who holds what. Both sides
 * import them from here — the coordinator, the scripts' decoders, the memory hub and the pure
 * decoders of src/state/ — so none of them depends on another for its types.
 */

export interface Holder {
  replicaId: string
  incarnation: string
}

/**
 * `alone` (a take's reply only): the take found no other ticket of this incarnation queued in the chat.
 * When an earlier acquisition of ours believes its ticket queued there, that ticket went with the
 * chat's state (evicted, flushed).
 */
export type TurnReply =
  | { status: 'granted'; ticket: number; fence: number; previousHolder: Holder | null; alone?: boolean }
  /**
   * `holderLeftMs`: the holder's lease (or offer) runs this much longer unless renewed (null: not said).
   * `answeredAt`: the server's clock when it answered (µs; absent from older scripts): a grant pushed
   * with a later `grantedAt` was made after this answer. `epoch`: the chat's state's (CHAT_FIELDS.epoch;
   * absent from older scripts): the polls name it, so a state made again since is told from a skip.
   */
  | { status: 'queued'; ticket: number; holderLeftMs: number | null; answeredAt?: number; alone?: boolean; epoch?: string }
  /**
   * `stateLost`: the chat's whole state is gone (flushed, evicted, lost) or made again since, not this ticket alone.
   * `presumedDead`: skipped as a dead replica's (it polled too late), not removed by an operator.
   */
  | { status: 'dropped'; stateLost?: boolean; presumedDead?: boolean }
  | { status: 'expired'; ticket: number }

/**
 * What giving a turn back did: released it, withdrew a queued ticket, or found neither ours; and
 * `handed`, when the turn is now a ticket of the same incarnation's (its next message of the chat):
 * the grant, handed over in the reply instead of a wake-up (a local hand-off). With 'not-ours', a
 * turn of ours that holds the chat now (a release sent again after its reply was lost: the first
 * run's hand-off).
 */
export interface TurnReleaseReply {
  outcome: 'released' | 'withdrawn' | 'not-ours'
  handed: HandedGrant | null
}

/** A grant of one of our tickets made by our own release (see TurnReleaseReply). */
export interface HandedGrant extends PushedGrant {
  ticket: number
}

export type LeaseKind = 'chat' | 'lead'

export interface RenewItem {
  kind: LeaseKind
  key: string
  fence: number
}

export interface YieldRequest {
  /** Who asked (an operator's user@host, or the replica's own name). */
  by: string
  /** Only this replica may take the lead next (while it is alive and the request lasts). */
  target: string | null
}

export type RenewReply = { ok: true; yieldRequest: YieldRequest | null } | { ok: false; reason: 'revoked' | 'expired' }

export interface BeatRecord {
  info: ReplicaInfo
  stats: ReplicaStats
  leases: HeldSummary
}

export interface ReplicaInfo {
  host: string
  pid: number
  version: string
  startedAt: number
  leaseMs: number
  /** How often it renews its heartbeat and every lease it holds (leaseMs / 3); absent in older records. */
  renewMs?: number
}

export interface ReplicaStats {
  turnsGranted: number
  waitingNow: number
  /** How long the longest-waiting message has waited so far (null: none waits); absent in older records. */
  oldestWaitMs?: number | null
  /** Messages refused with 'overloaded' (maxWaiting reached); absent in older records. */
  turnsShed?: number
  waitP99Ms: number | null
  leasesLost: number
  leadsHeld: number
  turnsHeld: number
}

export interface HeldSummary {
  /** What this replica holds (capped; `more` counts the rest). */
  held: Array<{ kind: LeaseKind; key: string; fence: number }>
  /** Chats it is waiting for, with the ticket. */
  waiting: Array<{ key: string; ticket: number }>
  /** Leads it stands for (campaigns), leading or not. */
  campaigns?: string[]
  more: number
}

export interface BeatReply {
  evicted: boolean
  /** Another live process that was using the same replicaId. */
  otherIncarnation: string | null
}

/** A grant made on our behalf by another replica's script, carried by the wake-up. */
export interface PushedGrant {
  fence: number
  previousHolder: Holder | null
  /** The lease length the grant was made with (an operator's grant may use another than ours). */
  leaseMs: number
  /** The request id of the acquisition the ticket was granted to, when the backend records it. */
  requestId?: string
  /** The server's clock when the grant was made (µs; on a push, absent from older scripts). */
  grantedAt?: number
  /** The server's clock (ms) when the granted ticket was queued (on a push; absent from older scripts). */
  enqueuedAt?: number
  /** Set by the receiving coordinator: the server generation it knew when the push came (-1: a check was under way). */
  receivedIn?: number
  /** Set by the receiving coordinator: when the push came (monotonic ms of that process). */
  receivedAt?: number
  /**
   * A grant our own release handed over in its reply: when that release was sent (monotonic ms of
   * this process). The grant was made after it, so its lease runs at least until then + leaseMs.
   */
  sentAt?: number
}

export type LeadReply =
  | { status: 'granted'; fence: number; previousHolder: Holder | null }
  /** Already this incarnation's (a grant whose reply was lost, asked again): renewed by this call. */
  | { status: 'mine'; fence: number; previousHolder: Holder | null }
  | { status: 'held'; holder: Holder; fence: number; msLeft: number }
  | { status: 'reserved'; target: string; msLeft: number }

export interface YieldRequestInput {
  by: string
  target: string | null
  ttlMs: number
  /** Only if the leader's fence is still this one. */
  ifFence: number | null
}

export type YieldResult =
  | { status: 'requested'; leader: Holder; fence: number; wakeRefused?: string | null }
  | { status: 'no-leader' }
  | { status: 'fence-changed'; fence: number }
  | { status: 'target-not-standing' }
