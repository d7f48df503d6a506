/**
 * What the operator scripts (lua/admin-*.lua) answer, decoded: each says what was done, or what
 * changed instead (nothing done). src/admin/interventions.ts adds the name the operator used.
 */
import type { Holder } from './types.js'

/** A grant an intervention made on the way (the next live ticket of the chat). */
export interface Granted extends Holder {
  ticket: number
  fence: number
}

export type ChatReleaseReply =
  | {
      status: 'released'
      holder: Holder
      fenceBefore: number | null
      /** The chat's fence after the revocation; the next grant (if any) is above it. */
      fenceAfter: number
      granted: Granted | null
      /** Redis refused a wake-up PUBLISH (the ACL user lacks the wake channel): done all the same. */
      wakeRefused: string | null
    }
  | { status: 'not-held'; fence: number | null }
  | { status: 'changed'; fence: number | null; holder: Holder | null }

export type ChatSkipReply =
  | {
      status: 'skipped'
      replicaId: string
      incarnation: string
      fence: number | null
      granted: Granted | null
      wakeRefused: string | null
    }
  | { status: 'not-queued' }
  | { status: 'changed'; replicaId: string; incarnation: string }
  | { status: 'holds-turn'; replicaId: string; fence: number | null }
  | { status: 'fence-changed'; fence: number | null }

export type LeadRevokeReply =
  | { status: 'revoked'; holder: Holder; fenceBefore: number | null; fenceAfter: number; wakeRefused: string | null }
  | { status: 'no-leader'; fence: number | null }
  | { status: 'changed'; fence: number | null; holder: Holder | null }
  | { status: 'target-not-standing' }

export type YieldCancelReply =
  | {
      status: 'cancelled'
      by: string
      target: string | null
      requestedAtMs: number | null
      fence: number | null
      wakeRefused: string | null
    }
  | { status: 'none'; fence: number | null }
  | { status: 'changed'; requestedAtMs: number | null; by: string; fence: number | null }

export type LockReleaseReply =
  | { status: 'released'; owner: string | null; fenceBefore: number | null; fenceAfter: number }
  | { status: 'not-held'; fence: number | null }
  | { status: 'changed'; fence: number | null; owner: string | null }

export type CheckpointRemoveReply =
  | { status: 'removed'; revision: number; flow: string | null; step: string | null; owner: string | null }
  | { status: 'absent' }
  | { status: 'changed'; revision: number; flow: string | null; step: string | null; owner: string | null }

export type CheckpointExtendReply =
  | { status: 'extended'; revision: number; expiresInMsBefore: number; flow: string | null; step: string | null }
  /** It expires later than asked already: left as it is. */
  | { status: 'unchanged'; revision: number; expiresInMsBefore: number; flow: string | null; step: string | null }
  | { status: 'absent' }
  | { status: 'changed'; revision: number; flow: string | null; step: string | null; owner: string | null }
  | { status: 'persistent'; revision: number }

/** The marker as the script found it (what was removed, or what is there instead). */
export interface HandoverFound {
  name: string | null
  replicaId: string | null
  incarnation: string | null
  /** Redis ms since its conversation waits. */
  since: number | null
}

export type HandoverRemoveReply = ({ status: 'removed' } & HandoverFound) | { status: 'absent' } | ({ status: 'changed' } & HandoverFound)

/** One chat's part of a replica eviction. */
export interface ChatEvictReply {
  /** Its turn was revoked (it held the chat). */
  revoked: boolean
  fenceBefore: number | null
  fenceAfter: number | null
  ticketsDropped: number
  granted: Granted | null
  wakeRefused: string | null
}

/** One lead's part of a replica eviction. */
export interface LeadEvictReply {
  revoked: boolean
  fenceBefore: number | null
  fenceAfter: number | null
  candidacyWithdrawn: boolean
  wakeRefused: string | null
}

/** The heartbeat record of a replica taken down by an operator (`replica evict`). */
export type ReplicaEvictReply =
  | {
      /** 'tombstoned' now, or 'already' by an earlier eviction (its keys are cleaned again). */
      status: 'tombstoned' | 'already'
      incarnation: string
      /** The record's `leases` and `info` JSON as the evicted incarnation last wrote them. */
      leases: string | null
      info: string | null
    }
  | { status: 'not-alive' }
  | { status: 'changed'; incarnation: string }
