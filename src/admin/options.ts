/** The options of the operator interventions: what each is conditioned on, and what it records. */
import type { AuditOptions } from './interventions.js'

export interface YieldOptions extends AuditOptions {
  /** Only this standby may take the lead next (while it stands and the request lasts). */
  target?: string | null
  /** How long the request (and a target's reservation) lasts. Default 30 s. */
  ttlMs?: number
  /** Only if the leader's fence is still this one. */
  ifFence?: number | null
  /** Write an audit record (the CLI does; the runtime's own tests need not). Default false. */
  audit?: boolean
}

export interface ConditionOptions extends AuditOptions {
  /** Only if the key's fence is still this one (what the operator saw). */
  ifFence?: number | null
  /** Only if the holder's incarnation is still this one. */
  ifIncarnation?: string | null
}

export interface LeadRevokeOptions extends ConditionOptions {
  /** Reserve the lead for this standing replica (as a targeted yield). */
  target?: string | null
  /** How long a target's reservation lasts. Default 30 s. */
  ttlMs?: number
}

export interface GrantOptions {
  /**
   * Lease of a grant the intervention makes on the way (the grantee confirms on its first poll and
   * extends it to its own leaseMs). Default: the longest lease of the replicas involved, else 15 s.
   */
  grantLeaseMs?: number
}

export interface EvictOptions extends AuditOptions {
  /** Only if the replica's incarnation is still this one (required: what the operator saw). */
  ifIncarnation: string
  /** How long the tombstone refuses the evicted incarnation's beats. Default 24 h. */
  tombstoneTtlMs?: number
  /**
   * Also SCAN every chat and lead for the evicted incarnation (its heartbeat record lists at most 100
   * of each, as of its last beat). Default: only when the record says it listed fewer than it had,
   * or cannot be read.
   */
  scan?: boolean
}

export interface YieldCancelOptions extends ConditionOptions {
  /** Only if the pending request is still the one the operator saw (its Redis ms). */
  ifRequestedAt?: number | null
}

export interface HandoverRemoveOptions extends AuditOptions {
  /** Only if the marker was left by this incarnation (required: what the operator saw). */
  ifIncarnation: string
  /** Only if the marker still marks this wait (its `since`); a marker without one is compared on its incarnation only. */
  ifSince?: number | null
}
