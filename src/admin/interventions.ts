/**
 * The typed results of operator interventions. Every intervention is one Lua script conditioned on
 * what the operator saw; a result either says what was done, or what changed instead (nothing done):
 * the script's decoded reply (src/wire/interventions.ts) with the name the operator used.
 */
import type {
  ChatEvictReply,
  ChatReleaseReply,
  ChatSkipReply,
  CheckpointRemoveReply,
  Granted,
  LeadEvictReply,
  LeadRevokeReply,
  LockReleaseReply,
  YieldCancelReply,
} from '../wire/interventions.js'

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

export type { Granted }

export type ChatReleaseResult = ChatReleaseReply & { key: string }
export type ChatSkipResult = ChatSkipReply & { key: string; ticket: number }
export type LeadRevokeResult = LeadRevokeReply & { name: string }
export type LockReleaseResult = LockReleaseReply & { key: string }
export type YieldCancelResult = YieldCancelReply & { name: string }
export type CheckpointRemoveResult = CheckpointRemoveReply & { key: string }

export interface EvictedChat extends ChatEvictReply {
  key: string
}

export interface EvictedLead extends LeadEvictReply {
  name: string
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
