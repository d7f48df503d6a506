/**
 * What a coordinator needs from the shared state: each method is one atomic step (one Lua script on
 * Redis, one synchronous block in the in-memory hub). The coordinator above it — waiting, renewing,
 * local deadlines, events — is the same code for both, so the memory reference behaves like Redis.
 */

export interface Holder {
  replicaId: string
  incarnation: string
}

export type TurnReply =
  | { status: 'granted'; ticket: number; fence: number; previousHolder: Holder | null }
  | { status: 'queued'; ticket: number; position: number; holder: (Holder & { fence: number }) | null }
  | { status: 'dropped' }
  | { status: 'expired'; ticket: number }

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
}

export interface ReplicaStats {
  turnsGranted: number
  waitingNow: number
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
  serverTimeMs: number
}

/** A grant made on our behalf by another replica's script, carried by the wake-up. */
export interface PushedGrant {
  fence: number
  previousHolder: Holder | null
  /** The lease length the grant was made with (an operator's grant may use another than ours). */
  leaseMs: number
}

export type WakeHandler = (kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant) => void

export interface Warning {
  code: string
  message: string
}

export type LeadReply =
  | { status: 'granted'; fence: number; previousHolder: Holder | null }
  | { status: 'mine'; fence: number }
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
  | { status: 'requested'; leader: Holder; fence: number }
  | { status: 'no-leader' }
  | { status: 'fence-changed'; fence: number }
  | { status: 'target-not-standing' }

export interface CoordinationBackend {
  readonly kind: 'redis' | 'memory'
  /** Schema check and safety checks; problems come back as warnings, not exceptions. */
  init(): Promise<Warning[]>
  /**
   * Take a ticket (ticket null) or poll with one. `requestId` is unique per acquisition: a retry
   * after a lost reply finds the ticket taken the first time instead of queueing a second one.
   */
  turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId: string,
  ): Promise<TurnReply>
  turnRelease(key: string, incarnation: string, ticket: number, leaseMs: number, requestId?: string): Promise<0 | 1 | 2>
  /** Take a lead if free; `stand` lists this incarnation as a standby while another leads. */
  leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): Promise<LeadReply>
  /** Release a lead held with `fence` (null: only stop standing). */
  leadRelease(name: string, incarnation: string, fence: number | null, leaseMs: number): Promise<0 | 1>
  /** An operator's request that the leader step down (`provider yield`). */
  requestYield(name: string, request: YieldRequestInput): Promise<YieldResult>
  /** One renewal per item; a failed item is an Error in its place. */
  renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>>
  beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): Promise<BeatReply>
  replicaStop(replicaId: string, incarnation: string): Promise<void>
  subscribe(incarnation: string, onWake: WakeHandler): Promise<() => Promise<void>>
  /** Is the push channel subscribed right now? (Then polling is only the safety net.) */
  pushReady(): boolean
  /**
   * Which server(s) hold the state: Redis run_ids (every master on a cluster), or null when it cannot
   * be told (INFO refused by an ACL). A change means a restart or a failover: state may be lost.
   */
  serverIdentity(leaseMs?: number): Promise<string | null>
  /** Append a notable event to the shared event log (best effort). */
  appendEvent(event: Record<string, unknown>): Promise<void>
  /** Close what this backend opened (not a client the caller passed in). */
  close(): Promise<void>
  /** As if the process died: drop connections without a word to the server. */
  crash(): void
}
