/**
 * The operator interventions (lua/admin-*): release, skip and evict on chats, leads, locks,
 * checkpoints, handover markers and replicas, each conditioned on what the operator saw. Split from
 * registry.ts by family: the largest one.
 */
import type {
  ChatEvictReply,
  ChatReleaseReply,
  ChatSkipReply,
  CheckpointExtendReply,
  CheckpointRemoveReply,
  HandoverRemoveReply,
  LeadEvictReply,
  LeadRevokeReply,
  LockReleaseReply,
  ReplicaEvictReply,
  YieldCancelReply,
} from '../../wire/interventions.js'
import { defineScript, unknownIf } from '../define.js'
import { checkpointFound, grantedAt, holderOf, numOrNull, row, strOrNull, unexpected } from './replies.js'

export const ADMIN_CHAT_RELEASE = defineScript({
  name: 'admin-chat-release-2',
  keys: ['state', 'queue'],
  argv: { ifFence: 'num?', ifIncarnation: 'str?', leaseMs: 'int', idleTtlMs: 'int', wakeChannelPrefix: 'str' },
  decode: (r, key): ChatReleaseReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'released',
          holder: holderOf(a[1], a[2])!,
          fenceBefore: numOrNull(a[3]),
          fenceAfter: Number(a[4]),
          granted: grantedAt(a, 5),
          wakeRefused: strOrNull(a[9]),
        }
      case 0:
        return { status: 'not-held', fence: numOrNull(a[1]) }
      case -1:
        return { status: 'changed', fence: numOrNull(a[1]), holder: holderOf(a[2], a[3]) }
      default:
        throw unexpected(key, a)
    }
  },
  // operator interventions are conditioned on what the operator saw: a refusal from a second run may
  // follow the first run's effect
  resent: unknownIf((r) => r.status !== 'released'),
})

export const ADMIN_CHAT_SKIP = defineScript({
  name: 'admin-chat-skip-2',
  keys: ['state', 'queue'],
  argv: { ticket: 'num', ifIncarnation: 'str?', ifFence: 'num?', leaseMs: 'int', idleTtlMs: 'int', wakeChannelPrefix: 'str' },
  decode: (r, key): ChatSkipReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'skipped',
          replicaId: String(a[1] ?? ''),
          incarnation: String(a[2] ?? ''),
          fence: numOrNull(a[3]),
          granted: grantedAt(a, 4),
          wakeRefused: strOrNull(a[8]),
        }
      case 0:
        return { status: 'not-queued' }
      case -1:
        return { status: 'changed', incarnation: String(a[1] ?? ''), replicaId: String(a[2] ?? '') }
      case -2:
        return { status: 'holds-turn', replicaId: String(a[1] ?? ''), fence: numOrNull(a[2]) }
      case -3:
        return { status: 'fence-changed', fence: numOrNull(a[1]) }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'skipped'),
})

export const ADMIN_CHAT_EVICT = defineScript({
  name: 'admin-chat-evict-2',
  keys: ['state', 'queue'],
  argv: { incarnation: 'str', leaseMs: 'int', idleTtlMs: 'int', wakeChannelPrefix: 'str' },
  decode: (r, key): ChatEvictReply => {
    const a = row(r, key)
    return {
      revoked: a[0] === 1,
      fenceBefore: numOrNull(a[1]),
      fenceAfter: numOrNull(a[2]),
      ticketsDropped: Number(a[3] ?? 0),
      granted: grantedAt(a, 4),
      wakeRefused: strOrNull(a[8]),
    }
  },
  // nothing found by a second run: the first one may have revoked and dropped it all
  resent: unknownIf((r) => !r.revoked && r.ticketsDropped === 0),
})

export const ADMIN_LEAD_REVOKE = defineScript({
  name: 'admin-lead-revoke-1',
  keys: ['lead'],
  argv: { ifFence: 'num?', ifIncarnation: 'str?', target: 'str?', ttlMs: 'int', by: 'str', wakeChannelPrefix: 'str' },
  decode: (r, key): LeadRevokeReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'revoked',
          holder: holderOf(a[1], a[2])!,
          fenceBefore: numOrNull(a[3]),
          fenceAfter: Number(a[4]),
          wakeRefused: strOrNull(a[5]),
        }
      case 0:
        return { status: 'no-leader', fence: numOrNull(a[1]) }
      case -1:
        return { status: 'changed', fence: numOrNull(a[1]), holder: holderOf(a[2], a[3]) }
      case -2:
        return { status: 'target-not-standing' }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'revoked'),
})

export const ADMIN_YIELD_CANCEL = defineScript({
  name: 'admin-yield-cancel-1',
  keys: ['lead'],
  argv: { ifRequestedAt: 'num?', ifFence: 'num?', wakeChannelPrefix: 'str' },
  decode: (r, key): YieldCancelReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'cancelled',
          by: String(a[1]),
          target: strOrNull(a[2]),
          requestedAtMs: numOrNull(a[3]),
          fence: numOrNull(a[4]),
          wakeRefused: strOrNull(a[5]),
        }
      case 0:
        return { status: 'none', fence: numOrNull(a[1]) }
      case -1:
        return { status: 'changed', requestedAtMs: numOrNull(a[1]), by: String(a[2]), fence: numOrNull(a[3]) }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'cancelled'),
})

export const ADMIN_LEAD_EVICT = defineScript({
  name: 'admin-lead-evict-1',
  keys: ['lead'],
  argv: { incarnation: 'str', wakeChannelPrefix: 'str' },
  decode: (r, key): LeadEvictReply => {
    const a = row(r, key)
    return {
      revoked: a[0] === 1,
      fenceBefore: numOrNull(a[1]),
      fenceAfter: numOrNull(a[2]),
      candidacyWithdrawn: a[3] === 1,
      wakeRefused: strOrNull(a[4]),
    }
  },
  resent: unknownIf((r) => !r.revoked && !r.candidacyWithdrawn),
})

export const ADMIN_LOCK_RELEASE = defineScript({
  name: 'admin-lock-release-1',
  keys: ['lock'],
  argv: { ifFence: 'num?' },
  decode: (r, key): LockReleaseReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return { status: 'released', fenceBefore: numOrNull(a[1]), fenceAfter: Number(a[2]), owner: strOrNull(a[3]) }
      case 0:
        return { status: 'not-held', fence: numOrNull(a[1]) }
      case -1:
        return { status: 'changed', fence: numOrNull(a[1]), owner: strOrNull(a[2]) }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'released'),
})

export const ADMIN_CHECKPOINT_RM = defineScript({
  name: 'admin-checkpoint-rm-1',
  keys: ['checkpoint'],
  argv: { revision: 'num' },
  decode: (r, key): CheckpointRemoveReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return { status: 'removed', ...checkpointFound(a) }
      case 0:
        return { status: 'absent' }
      case -1:
        return { status: 'changed', ...checkpointFound(a) }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'removed'),
})

export const ADMIN_CHECKPOINT_EXTEND = defineScript({
  name: 'admin-checkpoint-extend-1',
  keys: ['checkpoint'],
  argv: { revision: 'num', ttlMs: 'int' },
  decode: (r, key): CheckpointExtendReply => {
    const a = row(r, key)
    const found = () => ({ revision: Number(a[1]), expiresInMsBefore: Number(a[2]), flow: strOrNull(a[3]), step: strOrNull(a[4]) })
    switch (a[0]) {
      case 1:
        return { status: 'extended', ...found() }
      case 2:
        return { status: 'unchanged', ...found() }
      case 0:
        return { status: 'absent' }
      case -1:
        return { status: 'changed', ...checkpointFound(a) }
      case -2:
        return { status: 'persistent', revision: Number(a[1]) }
      default:
        throw unexpected(key, a)
    }
  },
  // 'unchanged' is a second run's answer too (the expiry already extended)
  resent: unknownIf((r) => r.status !== 'extended' && r.status !== 'unchanged'),
})

export const ADMIN_HANDOVER_RM = defineScript({
  name: 'admin-handover-rm-1',
  keys: ['marker'],
  argv: { ifIncarnation: 'str', ifSince: 'num?' },
  decode: (r, key): HandoverRemoveReply => {
    const a = row(r, key)
    const found = () => ({ name: strOrNull(a[1]), replicaId: strOrNull(a[2]), incarnation: strOrNull(a[3]), since: numOrNull(a[4]) })
    switch (a[0]) {
      case 1:
        return { status: 'removed', ...found() }
      case 0:
        return { status: 'absent' }
      case -1:
        return { status: 'changed', ...found() }
      default:
        throw unexpected(key, a)
    }
  },
  resent: unknownIf((r) => r.status !== 'removed'),
})

export const ADMIN_REPLICA_EVICT = defineScript({
  name: 'admin-replica-evict-2',
  keys: ['replica', 'index'],
  argv: { replicaId: 'str', ifIncarnation: 'str', tombstoneTtlMs: 'int' },
  decode: (r, key): ReplicaEvictReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
      case 2:
        return {
          status: a[0] === 1 ? 'tombstoned' : 'already',
          incarnation: String(a[1]),
          leases: strOrNull(a[2]),
          info: strOrNull(a[3]),
        }
      case 0:
        return { status: 'not-alive' }
      case -1:
        return { status: 'changed', incarnation: String(a[1] ?? '') }
      default:
        throw unexpected(key, a)
    }
  },
  // 'already' is a second run's answer (the tombstone its first run wrote)
  resent: unknownIf((r) => r.status !== 'tombstoned' && r.status !== 'already'),
})
