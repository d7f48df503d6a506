/**
 * The typed results of operator interventions. Every intervention is one Lua script conditioned on
 * what the operator saw; a result either says what was done, or what changed instead (nothing done).
 */
import type { Holder } from '../wire/types.js'

/** What every intervention records about itself in the audit trail. */
export interface AuditOptions {
  /** Who asks (recorded). Default user@host. */
  by?: string
  /** Why (free text, recorded as given). */
  reason?: string
  /** The command line as the operator would type it (recorded), e.g. `chat release chat:42`. */
  command?: string
}

/** Whether the audit record reached the event stream. A failed write never hides the result. */
export type AuditOutcome = { written: true; id: string } | { written: false; error: string }

export interface Granted extends Holder {
  ticket: number
  fence: number
}

export type ChatReleaseResult =
  | {
      status: 'released'
      key: string
      holder: Holder
      fenceBefore: number | null
      /** The chat's fence after the revocation; the next grant (if any) is above it. */
      fenceAfter: number
      granted: Granted | null
    }
  | { status: 'not-held'; key: string; fence: number | null }
  | { status: 'changed'; key: string; fence: number | null; holder: Holder | null }

export type ChatSkipResult =
  | {
      status: 'skipped'
      key: string
      ticket: number
      replicaId: string
      incarnation: string
      fence: number | null
      granted: Granted | null
    }
  | { status: 'not-queued'; key: string; ticket: number }
  | { status: 'changed'; key: string; ticket: number; replicaId: string; incarnation: string }
  | { status: 'holds-turn'; key: string; ticket: number; replicaId: string; fence: number | null }
  | { status: 'fence-changed'; key: string; ticket: number; fence: number | null }

export type LeadRevokeResult =
  | { status: 'revoked'; name: string; holder: Holder; fenceBefore: number | null; fenceAfter: number }
  | { status: 'no-leader'; name: string; fence: number | null }
  | { status: 'changed'; name: string; fence: number | null; holder: Holder | null }
  | { status: 'target-not-standing'; name: string }

export type LockReleaseResult =
  | { status: 'released'; key: string; owner: string | null; fenceBefore: number | null; fenceAfter: number }
  | { status: 'not-held'; key: string; fence: number | null }
  | { status: 'changed'; key: string; fence: number | null; owner: string | null }

export type CheckpointRemoveResult =
  | { status: 'removed'; key: string; revision: number; flow: string | null; step: string | null; owner: string | null }
  | { status: 'absent'; key: string }
  | { status: 'changed'; key: string; revision: number; flow: string | null; step: string | null; owner: string | null }

export interface EvictedChat {
  key: string
  /** Its turn was revoked (it held the chat). */
  revoked: boolean
  fenceBefore: number | null
  fenceAfter: number | null
  ticketsDropped: number
  granted: Granted | null
}

export interface EvictedLead {
  name: string
  revoked: boolean
  fenceBefore: number | null
  fenceAfter: number | null
  candidacyWithdrawn: boolean
}

export type ReplicaEvictResult =
  | {
      status: 'evicted'
      replicaId: string
      incarnation: string
      chats: EvictedChat[]
      leads: EvictedLead[]
      /** Keys whose clean-up failed (they expire unrefreshed within leaseMs anyway). */
      failed: Array<{ key: string; kind: 'chat' | 'lead'; error: string }>
      /** Whether every chat and lead was scanned (not only those in the heartbeat record). */
      scanned: boolean
    }
  | { status: 'not-alive'; replicaId: string }
  | { status: 'changed'; replicaId: string; incarnation: string }
