/**
 * The typed results of operator interventions. Every intervention is one Lua script conditioned on
 * what the operator saw; a result either says what was done, or what changed instead (nothing done):
 * the script's decoded reply (src/wire/interventions.ts) with the name the operator used.
 */
import type {
  ChatEvictReply,
  ChatReleaseReply,
  ChatSkipReply,
  CheckpointExtendReply,
  CheckpointRemoveReply,
  Granted,
  HandoverRemoveReply,
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
export type CheckpointExtendResult = CheckpointExtendReply & { key: string; ttlMs: number }
export type HandoverRemoveResult = HandoverRemoveReply & { key: string }

/** How a bulk clean-up runs: one conditioned script per entry, in bounded batches, one audit record. */
export interface BulkOptions extends AuditOptions {
  /** Entries whose scripts run at once (a bound on the load one batch puts on Redis). Default 100. */
  batchSize?: number
  /** Called after each batch: entries done so far, of how many. */
  onProgress?: (done: number, total: number) => void
  /** What selected the entries (recorded in the audit record as given). */
  filter?: Record<string, unknown>
}

/** One entry of a bulk clean-up: removed, changed since it was listed (skipped), gone already, or failed. */
export interface BulkEntryResult {
  key: string
  status: 'removed' | 'changed' | 'absent' | 'failed'
  error?: string
}

export interface BulkCounts {
  /** Entries listed (what the operator confirmed). */
  listed: number
  removed: number
  /** Changed since they were listed: skipped, never removed. */
  changed: number
  /** Gone already (expired, or taken by a replica). */
  absent: number
  /** The script could not run (Redis unreachable, a timeout): nothing known to be done. */
  failed: number
}

export interface BulkResult {
  status: 'done'
  counts: BulkCounts
  entries: BulkEntryResult[]
}

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
      failed: Array<{ key: string; kind: 'chat' | 'lead'; error: string; code?: string }>
      /** Whether every chat and lead was scanned (not only those in the heartbeat record). */
      scanned: boolean
    }
  | { status: 'not-alive'; replicaId: string }
  | { status: 'changed'; replicaId: string; incarnation: string }
