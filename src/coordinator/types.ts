/** The coordinator's options and the public shapes of what it hands out (turns, leads, events). */
import type { Duration } from '../duration.js'
import type { LeaseLostReason } from '../errors/lease-lost-error.js'
import type { Holder, LeaseKind } from '../wire/types.js'

export interface CoordinatorOptions {
  /** Unique among running replicas; a random UUID unless given (a pod or host name works). */
  replicaId?: string
  /** Lease length: failover time after a crash, and how long a replica may freeze. Default 15 s. */
  leaseMs?: Duration
  /** Longest pause between two polls of a waiting turn. Default 100 ms. */
  maxPollMs?: Duration
  /** First pause between polls (doubles up to maxPollMs). Default 5 ms. */
  minPollMs?: Duration
  /** How long a message waits for its chat's turn by default. Default 2 min. */
  turnWaitMs?: Duration
  /**
   * Most messages of this replica waiting for a turn at once: one more is refused at once with
   * CoordinationUnavailableError('overloaded') and counted in `metrics.turnsShed`. Default 50,000.
   */
  maxWaiting?: number
  /** How far before the Redis expiry a lease that could not be renewed is dropped locally. Default leaseMs / 10. */
  renewMarginMs?: Duration
  /** A stable description of this process for operators (defaults: hostname, pid, package version). */
  meta?: { host?: string; pid?: number; version?: string }
}

export interface AcquireTurnOptions {
  /** Give up after this long with CoordinationUnavailableError (default: the coordinator's turnWaitMs). */
  waitMs?: Duration
  /** Abort the wait (rejects with CoordinationUnavailableError, reason 'aborted'). */
  signal?: AbortSignal
}

/** A held lease: a chat turn or a lead. Valid until `signal` aborts; check with `assertHeld()` before acting. */
export interface Lease {
  readonly key: string
  readonly kind: LeaseKind
  /** Strictly grows for this key forever: pass it to whatever the holder writes, so late writes can be refused. */
  readonly fence: number
  /** Aborts (with a LeaseLostError as reason) the moment the lease is known lost. */
  readonly signal: AbortSignal
  /**
   * True while held, by the monotonic clock now: before the local deadline, and while the last
   * renewal Redis confirmed is not late (false meanwhile, true again once a renewal confirms it).
   */
  readonly held: boolean
  /**
   * Throws LeaseLostError once the lease is lost — including right after waking from a freeze — and
   * (reason 'unconfirmed') while its last confirmed renewal is late, until a renewal confirms it.
   */
  assertHeld(): void
  /** Give the lease back (the next waiter is granted at once). Idempotent; never throws for network errors. */
  release(): Promise<void>
}

export interface TurnReleaseOptions {
  /**
   * false: this turn served nothing (a stale timer took it only to find its work done or no longer
   * wanted). The chat's last holder goes back to the one before this turn, so the next holder's
   * `previousHolder` names who last served the chat, not this turn. Default true.
   */
  served?: boolean
}

export interface Turn extends Lease {
  readonly kind: 'chat'
  /** Give the turn back (the next waiter is granted at once); see TurnReleaseOptions. Idempotent. */
  release(options?: TurnReleaseOptions): Promise<void>
  readonly ticket: number
  /** Who held this chat before this grant; null when the key was new or had been cleaned up. */
  readonly previousHolder: Holder | null
  /** How long this turn waited in the queue (ms, local clock). */
  readonly waitedMs: number
}

/** A held lead: a provider's exclusive transport, a scheduler, any `tryLead` name. */
export interface Lead extends Lease {
  readonly kind: 'lead'
  /** The name given to tryLead/campaign (same as `key`). */
  readonly name: string
  /** Who led before this grant; null when the lead was new or had been cleaned up. */
  readonly previousHolder: Holder | null
}

/**
 * Why a replica is not (or no longer) the leader:
 * `standby` it stood and another replica leads; `lost` its lease was lost (expired, revoked);
 * `yield` an operator asked it to step down; `provider-down` its transport stayed closed for
 * providerDownMs; `resign` it called resign(); `stopped` the election or coordinator stopped;
 * `leader-failed` a campaign's onLeader rejected (it never led: it steps down, sits out, stands again);
 * `released` a tryLead's lead was released (`lead.release()`).
 */
export type FollowerReason = 'standby' | 'lost' | 'yield' | 'provider-down' | 'resign' | 'stopped' | 'leader-failed' | 'released'

export interface CampaignOptions {
  /** Called when this replica wins: connect the exclusive transport here. */
  onLeader?: (lead: Lead) => void | Promise<void>
  /** Called when it stands by, or stops leading (before the lead is released when it steps down). */
  onFollower?: (info: { name: string; reason: FollowerReason }) => void | Promise<void>
  /** A leader whose transport is reported down this long yields. Default 1 min. */
  providerDownMs?: Duration
  /** After yielding or resigning, wait this long before standing again, so a standby wins. Default 3 s. */
  sitOutMs?: Duration
}

export interface LeaseLostEvent {
  key: string
  kind: LeaseKind
  fence: number
  reason: LeaseLostReason
}

/**
 * What became of a conversation another replica had: `resumed` from its checkpoint, or a handover
 * marker's fallback — `notify`, `restart`, `custom`, `drop` — or `changed` (an ephemeral checkpoint
 * of another flow version, not resumed: the flow's fingerprint differs).
 */
export type HandoverOutcome = 'resumed' | 'notify' | 'restart' | 'custom' | 'drop' | 'changed'

export interface HandoverEvent {
  /** The chat key. */
  key: string
  /** The flow or async conversation handed over. */
  name: string
  outcome: HandoverOutcome
  /** The replica that had the conversation, when known. */
  from?: string | null
}

/** `coordination:leader`: a campaign's `onLeader` has resolved (the transport is connected), or a `tryLead` was granted. */
export interface LeaderEvent {
  name: string
  fence: number
  previousHolder: Holder | null
}

/**
 * `coordination:follower`: this replica stands by, stopped leading, or failed to (see FollowerReason).
 * One follows each `coordination:leader`; `standby` and `leader-failed` come without one before them.
 */
export interface FollowerEvent {
  name: string
  reason: FollowerReason
}

/** `coordination:warning`: something makes coordination unsafe or slow, or an application callback threw. */
export interface WarningEvent {
  /** `eviction-policy`, `layout-mismatch`, `duplicate-replica-id`, `server-changed`, `callback-error` */
  code: string
  message: string
  /** The thrown value, for `callback-error`. */
  error?: unknown
}

/** `coordination:evicted`: an operator evicted this incarnation (`replica evict`). */
export interface EvictedEvent {
  replicaId: string
  incarnation: string
}

/** `coordination:turn-granted`: a turn of this replica was granted (for metrics: the wait it took). */
export interface TurnGrantedEvent {
  key: string
  waitedMs: number
}

/** `coordination:renewed`: a renewal cycle's heartbeat came back (for metrics: its round trip). */
export interface RenewedEvent {
  roundTripMs: number
  /** Leases renewed in that cycle. */
  leases: number
}

/** Every event of a coordinator, with its payload: `coordinator.on(name, (payload) => …)` is typed by it. */
export interface CoordinatorEvents {
  'coordination:turn-granted': [TurnGrantedEvent]
  'coordination:renewed': [RenewedEvent]
  'coordination:leader': [LeaderEvent]
  'coordination:follower': [FollowerEvent]
  'coordination:lease-lost': [LeaseLostEvent]
  'coordination:handover': [HandoverEvent]
  'coordination:warning': [WarningEvent]
  'coordination:evicted': [EvictedEvent]
}
