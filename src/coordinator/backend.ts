/**
 * What a coordinator needs from the shared state: each method is one atomic step (one Lua script on
 * Redis, one synchronous block in the in-memory hub). The coordinator above it — waiting, renewing,
 * local deadlines, events — is the same code for both, so the memory reference behaves like Redis.
 */

import type {
  BeatRecord,
  BeatReply,
  LeadReply,
  PushedGrant,
  RenewItem,
  RenewReply,
  TurnReleaseReply,
  TurnReply,
  YieldRequestInput,
  YieldResult,
} from '../wire/types.js'

export type WakeHandler = (kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant) => void

export interface Warning {
  code: string
  message: string
}

export interface CoordinationBackend {
  readonly kind: 'redis' | 'memory'
  /** Schema check and safety checks; problems come back as warnings, not exceptions. */
  init(): Promise<Warning[]>
  /** An error of start() that is an ACL refusal, named with the grant (a PermissionDeniedError); others as they are. */
  explainRefusal?(err: unknown): Promise<unknown>
  /**
   * Take a ticket (ticket null) or poll with one. `requestId` is unique per acquisition: a retry
   * after a lost reply finds the ticket taken the first time instead of queueing a second one.
   * `epoch`: the chat state's, as a reply that found our ticket queued named it ('' unknown): a poll
   * whose ticket is gone from a state with another epoch answers `stateLost`.
   */
  turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId: string,
    epoch?: string,
  ): Promise<TurnReply>
  /**
   * Release a turn or withdraw a ticket; ticket null: the one `requestId` took (its take-ticket reply
   * never came). `unserved`: the turn served nothing, so the chat's last holder goes back to the one before it.
   */
  turnRelease(
    key: string,
    incarnation: string,
    ticket: number | null,
    leaseMs: number,
    requestId?: string,
    unserved?: boolean,
    /** No other acquisition of this incarnation waits in the chat: its w: field goes too. */
    lastWaiter?: boolean,
    /**
     * The turn came through the queue: others are likely queued behind it (a hint of cost only: the
     * Redis script reads the next ticket with the holder's fields).
     */
    queued?: boolean,
  ): Promise<TurnReleaseReply>
  /** Take a lead if free; `stand` lists this incarnation as a standby while another leads. */
  leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): Promise<LeadReply>
  /** Release a lead held with `fence` (null: only stop standing); true when it was held with that fence. */
  leadRelease(name: string, incarnation: string, fence: number | null, leaseMs: number): Promise<boolean>
  /** The leader records its transport down (since now, yields `yieldAfterMs` later) or up; true when recorded. */
  leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): Promise<boolean>
  /** An operator's request that the leader step down (`provider yield`). */
  requestYield(name: string, request: YieldRequestInput): Promise<YieldResult>
  /** One renewal per item; a failed item is an Error in its place. */
  renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>>
  beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): Promise<BeatReply>
  replicaStop(replicaId: string, incarnation: string): Promise<void>
  /**
   * `onPushGap`: pushes may have been lost — the channel dropped, or is subscribed again after a drop
   * (called once the subscription is confirmed): waiters that rely on pushes poll now.
   */
  subscribe(incarnation: string, onWake: WakeHandler, onPushGap?: () => void): Promise<() => Promise<void>>
  /** Is the push channel subscribed right now? (Then polling is only the safety net.) */
  pushReady(): boolean
  /**
   * Which server(s) hold the state: Redis run_ids (every master on a cluster), or null when it cannot
   * be told (INFO refused by an ACL). A change means a restart or a failover: state may be lost.
   */
  serverIdentity(leaseMs?: number): Promise<string | null>
  /**
   * A Cluster's identity names each master with the slots it serves: which master (`host:port=run_id`)
   * serves this lease in `identity`, so that a change reaches only the leases of the masters that
   * changed. Null (or no such method): one server holds everything, and any change reaches all.
   */
  ownerIn?(identity: string, lease: { kind: 'chat' | 'lead'; key: string }): string | null
  /**
   * Call `onChange` when the server behind the client may have changed: the client reconnected, a
   * Cluster's masters changed. Returns a function that stops watching. (The memory hub: never.)
   */
  watchServer?(onChange: () => void): () => void
  /** Append a notable event to the shared event log (best effort). */
  appendEvent(event: Record<string, unknown>): Promise<void>
  /**
   * How long stop() may spend giving back what it holds (releases, withdrawals, the heartbeat's
   * removal) before it closes anyway: a Redis that is gone must not hold a stop for ever.
   */
  readonly stopBudgetMs: number
  /** Close what this backend opened (not a client the caller passed in), within about commandTimeoutMs. */
  close(): Promise<void>
  /** As if the process died: drop connections without a word to the server. */
  crash(): void
}
