/**
 * Every Lua script of lua/, typed: KEYS by role, ARGV by name in the script's order, and the decoder
 * of its reply. The scripts answer with small status codes whose meaning is the script's own (-1 is
 * "dropped" for one, "fence changed" for another): this module is the only place that reads them.
 * Each definition mirrors the comment block at the top of its lua/<name>.lua.
 */
import { CorruptStateError } from '../errors/corrupt-state-error.js'
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
  ReplicaEvictReply,
  YieldCancelReply,
} from '../wire/interventions.js'
import type { BeatReply, HandedGrant, Holder, LeadReply, RenewReply, TurnReleaseReply, TurnReply, YieldResult } from '../wire/types.js'
import { asIs, defineScript, unknownIf, type Reply } from './define.js'
import type { ListedHash } from '../state/bounded.js'

// ---------------------------------------------------------------- reading replies

type Row = Array<string | number | null>

function row(r: Reply, rawKey: string): Row {
  if (!Array.isArray(r)) throw new CorruptStateError(rawKey, 'unexpected script reply')
  return r as Row
}

function unexpected(rawKey: string, r: unknown): CorruptStateError {
  return new CorruptStateError(rawKey, `unexpected script reply ${JSON.stringify(r).slice(0, 80)}`)
}

/** A number field (NaN when absent). */
const num = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v))
const numOrNull = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v))
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))
const holderOf = (rid: unknown, inc: unknown): Holder | null =>
  rid === null || rid === undefined || rid === '' ? null : { replicaId: String(rid), incarnation: strOrNull(inc) ?? '' }

/** The grant an intervention made on the way: ticket, fence, replicaId, incarnation from position `at`. */
function grantedAt(r: Row, at: number): Granted | null {
  if (!r[at]) return null
  return { ticket: Number(r[at]), fence: Number(r[at + 1]), replicaId: String(r[at + 2] ?? ''), incarnation: String(r[at + 3] ?? '') }
}

/** The checkpoint an operator script found: revision, flow, step, writer's replicaId from position 1. */
const checkpointFound = (a: Row) => ({ revision: Number(a[1]), flow: strOrNull(a[2]), step: strOrNull(a[3]), owner: strOrNull(a[4]) })

/**
 * The turn scripts' status codes by name: the same tables as TURN and RELEASE in
 * lua/includes/status.lua (test/integration/chat-schema.test.ts runs that file and compares).
 */
export const TURN_STATUS = { granted: 1, queued: 0, dropped: -1, lapsed: -2, stateLost: -3 } as const
export const RELEASE_STATUS = { released: 1, withdrawn: 2, notOurs: 0 } as const

const releaseOutcome = (status: unknown): TurnReleaseReply['outcome'] =>
  status === RELEASE_STATUS.released ? 'released' : status === RELEASE_STATUS.withdrawn ? 'withdrawn' : 'not-ours'

/** A 0/1 answer. */
const yes = (r: Reply): boolean => r === 1

// ---------------------------------------------------------------- schema, heartbeat

export const SCHEMA_INIT = defineScript({
  name: 'schema-init-1',
  keys: ['schema'],
  argv: { version: 'int', layout: 'str' },
  decode: (r, key): { version: number; layout: string } => {
    const [version, layout] = row(r, key)
    return { version: Number(version), layout: String(layout) }
  },
  // idempotent: a second run answers as the first
  resent: asIs,
})

export const REPLICA_BEAT = defineScript({
  name: 'replica-beat-2',
  keys: ['replica', 'index'],
  argv: { replicaId: 'str', incarnation: 'str', leaseMs: 'int', info: 'json', stats: 'json', leases: 'json', wallClockMs: 'num' },
  decode: (r, key): BeatReply & { recordMissing: boolean } => {
    const a = row(r, key)
    if (a[0] === -1) return { evicted: true, otherIncarnation: null, recordMissing: false }
    return { evicted: false, otherIncarnation: a[1] ? String(a[1]) : null, recordMissing: a[3] === 1 }
  },
  // idempotent (the same record written again)
  resent: asIs,
})

export const REPLICA_STOP = defineScript({
  name: 'replica-stop-2',
  keys: ['replica', 'index'],
  argv: { incarnation: 'str', replicaId: 'str' },
  decode: yes,
  // false from a second run: the first one removed the record, or it was gone — stopped either way
  resent: () => true,
})

// ---------------------------------------------------------------- chat turns

export const TURN_ACQUIRE = defineScript({
  name: 'turn-acquire-2',
  keys: ['state', 'queue'],
  argv: {
    replicaId: 'str',
    incarnation: 'str',
    leaseMs: 'int',
    idleTtlMs: 'int',
    ticket: 'num?',
    wakeChannelPrefix: 'str',
    requestId: 'str',
  },
  decode: (r, key): TurnReply => {
    const a = row(r, key)
    switch (a[0]) {
      case TURN_STATUS.granted:
        return { status: 'granted', ticket: num(a[1]), fence: num(a[2]), previousHolder: holderOf(a[3], a[4]) }
      case TURN_STATUS.queued:
        return { status: 'queued', ticket: num(a[1]), holderLeftMs: numOrNull(a[2]) }
      case TURN_STATUS.dropped:
        return { status: 'dropped' }
      case TURN_STATUS.lapsed:
        return { status: 'expired', ticket: num(a[1]) }
      case TURN_STATUS.stateLost:
        return { status: 'dropped', stateLost: true }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // the request id: a second run finds the ticket its first run took (and its grant)
  resent: asIs,
})

export const TURN_RELEASE = defineScript({
  name: 'turn-release-2',
  keys: ['state', 'queue'],
  argv: {
    incarnation: 'str',
    ticket: 'num?',
    leaseMs: 'int',
    idleTtlMs: 'int',
    wakeChannelPrefix: 'str',
    requestId: 'str',
    unserved: 'flag',
    lastWaiter: 'flag',
  },
  decode: (r, key): TurnReleaseReply => {
    if (!Array.isArray(r)) return { outcome: releaseOutcome(r), handed: null }
    const a = r as Row
    const ticket = num(a[1])
    const fence = num(a[2])
    if (!Number.isInteger(ticket) || !Number.isFinite(fence)) throw unexpected(key, r)
    const handed: HandedGrant = { ticket, fence, previousHolder: holderOf(a[4], a[5]), leaseMs: num(a[6]) }
    if (a[3]) handed.requestId = String(a[3])
    return { outcome: releaseOutcome(a[0]), handed }
  },
  // 'not-ours' from a second run: the first one released or withdrew — nothing of ours is left either
  // way, which is all the coordinator asks of it (it retries a release that failed, not one refused);
  // a turn the first run handed to a ticket of ours is reported by the second run as held by us
  resent: asIs,
})

/** Chat turns and leads alike: the key is the chat's state hash or the lead hash. */
export const LEASE_RENEW = defineScript({
  name: 'lease-renew-1',
  keys: ['lease'],
  argv: { incarnation: 'str', fence: 'num', leaseMs: 'int', idleTtlMs: 'int' },
  decode: (r, key): RenewReply => renewReply(row(r, key)),
  // a second run renews again (an answer other than ok is the state now: revoked or expired since)
  resent: asIs,
})

/** One reply of lease-renew-1 or of lease-renew-many-0 (one per key). */
function renewReply(a: Row): RenewReply {
  if (a[0] === 1) return { ok: true, yieldRequest: a[1] ? { by: String(a[1]), target: a[2] ? String(a[2]) : null } : null }
  return { ok: false, reason: a[1] === 'expired' ? 'expired' : 'revoked' }
}

/** Many leases of one incarnation renewed in one call (a standalone server): KEYS and fences variadic. */
export const LEASE_RENEW_MANY = defineScript({
  name: 'lease-renew-many-0',
  keys: [],
  argv: { incarnation: 'str', leaseMs: 'int', idleTtlMs: 'int' },
  decode: (r, key): RenewReply[] => row(r, key).map((x) => renewReply(row(x as Reply, key))),
  // a second run renews again (each answer other than ok is the state now)
  resent: asIs,
})

// ---------------------------------------------------------------- leads

export const LEAD_ACQUIRE = defineScript({
  name: 'lead-acquire-1',
  keys: ['lead'],
  argv: { replicaId: 'str', incarnation: 'str', leaseMs: 'int', idleTtlMs: 'int', stand: 'flag' },
  decode: (r, key): LeadReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return { status: 'granted', fence: num(a[1]), previousHolder: holderOf(a[2], a[3]) }
      case 2:
        return { status: 'mine', fence: num(a[1]), previousHolder: holderOf(a[2], a[3]) }
      case 0:
        return { status: 'held', holder: { replicaId: String(a[1]), incarnation: String(a[2]) }, fence: num(a[3]), msLeft: num(a[4]) }
      case -1:
        return { status: 'reserved', target: String(a[1]), msLeft: num(a[2]) }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // a second run after a grant answers 'mine' (this incarnation holds it): the callers take that up
  resent: asIs,
})

export const LEAD_RELEASE = defineScript({
  name: 'lead-release-1',
  keys: ['lead'],
  argv: { incarnation: 'str', fence: 'num?', leaseMs: 'int', idleTtlMs: 'int', wakeChannelPrefix: 'str' },
  decode: yes,
  // false from a second run: the first one released it, or it was not ours any more — not held either way
  resent: () => true,
})

export const LEAD_TRANSPORT = defineScript({
  name: 'lead-transport-1',
  keys: ['lead'],
  argv: { incarnation: 'str', fence: 'num', down: 'flag', yieldAfterMs: 'int' },
  decode: yes,
  // idempotent: a second run writes the same (down keeps the first `td`)
  resent: asIs,
})

export const LEAD_YIELD = defineScript({
  name: 'lead-yield-1',
  keys: ['lead'],
  argv: { by: 'str', target: 'str?', ttlMs: 'int', ifFence: 'num?', wakeChannelPrefix: 'str' },
  decode: (r, key): YieldResult => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'requested',
          leader: { replicaId: String(a[1]), incarnation: String(a[2]) },
          fence: num(a[3]),
          wakeRefused: strOrNull(a[4]),
        }
      case 0:
        return { status: 'no-leader' }
      case -1:
        return { status: 'fence-changed', fence: num(a[1]) }
      case -2:
        return { status: 'target-not-standing' }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // a second run finds the request in place ('requested'); any other answer may follow the first run's
  // effect (the leader stepped down for it meanwhile)
  resent: unknownIf((r) => r.status !== 'requested'),
})

// ---------------------------------------------------------------- fenced locks

export const LOCK_ACQUIRE = defineScript({
  name: 'lock-acquire-1',
  keys: ['lock'],
  argv: { token: 'str', ttlMs: 'int', owner: 'str', idleTtlMs: 'int' },
  /** The fence of the acquisition, or null while another token holds it. */
  decode: (r, key): number | null => {
    const a = row(r, key)
    return a[0] === 1 ? Number(a[1]) : null
  },
  // the token: a second run finds the lock its first run took and answers its fence
  resent: asIs,
})

export const LOCK_RENEW = defineScript({
  name: 'lock-renew-1',
  keys: ['lock'],
  argv: { token: 'str', ttlMs: 'int', idleTtlMs: 'int' },
  decode: yes,
  // the token: a second run renews again
  resent: asIs,
})

export const LOCK_RELEASE = defineScript({
  name: 'lock-release-1',
  keys: ['lock'],
  argv: { token: 'str' },
  decode: yes,
  // false from a second run: the first one released it, or it was not held with the token any more —
  // not held with it either way
  resent: () => true,
})

// ---------------------------------------------------------------- checkpoints, handover markers

export type CheckpointSetReply =
  | { status: 'written'; revision: number }
  | { status: 'revision-conflict'; revision: number | null }
  | { status: 'fence-conflict'; fence: number }
  | { status: 'lease-expired'; fence: number }

/** What a fenced write's refusal says (includes/fenced.lua): -1 a newer fence, -2 the writer's lease expired. */
export type FencedWriteReply =
  { status: 'written' } | { status: 'fence-conflict'; fence: number } | { status: 'lease-expired'; fence: number }

function fencedRefusal(a: Row, key: string): { status: 'fence-conflict' | 'lease-expired'; fence: number } {
  if (a[0] === -1) return { status: 'fence-conflict', fence: Number(a[1]) }
  if (a[0] === -2) return { status: 'lease-expired', fence: Number(a[1]) }
  throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
}

export const CHECKPOINT_SET = defineScript({
  name: 'checkpoint-set-2',
  keys: ['checkpoint', 'state'],
  argv: {
    expectedRevision: 'num?',
    flow: 'str',
    step: 'str',
    data: 'str',
    ownerReplicaId: 'str?',
    ownerIncarnation: 'str?',
    ownerFence: 'num?',
    ttlMs: 'num?',
    fingerprint: 'str?',
    answerBytes: 'num',
    writeId: 'str',
  },
  decode: (r, key): CheckpointSetReply => {
    const a = row(r, key)
    if (a[0] === 1) return { status: 'written', revision: Number(a[1]) }
    if (a[0] === 0) return { status: 'revision-conflict', revision: a[1] ? Number(a[1]) : null }
    return fencedRefusal(a, key)
  },
  // the write id: a second run answers 'written' while its write is current, but a refusal once
  // another write replaced it
  resent: unknownIf((r) => r.status !== 'written'),
})

export const CHECKPOINT_CLEAR = defineScript({
  name: 'checkpoint-clear-2',
  keys: ['checkpoint', 'state'],
  argv: { revision: 'num', fence: 'num?' },
  decode: (r): 'cleared' | 'changed' | 'superseded' | 'lease-expired' =>
    r === 1 ? 'cleared' : r === -1 ? 'superseded' : r === -2 ? 'lease-expired' : 'changed',
  // a second run finds the row its first run deleted gone
  resent: unknownIf((r) => r !== 'cleared'),
})

export const HANDOVER_SET = defineScript({
  name: 'handover-set-2',
  keys: ['marker', 'state'],
  argv: { name: 'str', replicaId: 'str', incarnation: 'str', ttlMs: 'num?', data: 'json?', fence: 'num?' },
  decode: (r, key): FencedWriteReply => {
    const a = row(r, key)
    return a[0] === 1 ? { status: 'written' } : fencedRefusal(a, key)
  },
  // the marker written again (a fenced second run refused: the first one may have written)
  resent: unknownIf((r) => r.status !== 'written'),
})

export const HANDOVER_CLEAR = defineScript({
  name: 'handover-clear-2',
  keys: ['marker', 'state'],
  argv: { incarnation: 'str?', fence: 'num?' },
  decode: (r): 'cleared' | 'absent' | 'superseded' | 'lease-expired' =>
    r === 1 ? 'cleared' : r === -1 ? 'superseded' : r === -2 ? 'lease-expired' : 'absent',
  // absent from a second run: the first one removed it, or it was not ours — none of ours left
  // either way; a fenced one refused: the marker is not the clearer's to remove any more either way
  resent: (r) => (r === 'absent' ? 'cleared' : r),
})

export const HANDOVER_TAKE = defineScript({
  name: 'handover-take-1',
  keys: ['marker'],
  argv: { unless: 'str?' },
  /** The marker's fields as a hash and whether it was taken (false: left, `unless`'s own), or null when there was none. */
  decode: (r): { taken: boolean; fields: Record<string, string> } | null => {
    if (!Array.isArray(r) || r.length === 0) return null
    const h: Record<string, string> = {}
    for (let i = 1; i + 1 < r.length; i += 2) h[String(r[i])] = String(r[i + 1])
    return { taken: r[0] === 1, fields: h }
  },
  // none from a second run: the first one may have taken the marker, and what it read is lost with
  // the reply
  resent: unknownIf((r) => r === null),
})

// ---------------------------------------------------------------- operator interventions

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

// ---------------------------------------------------------------- reads

/** read-listing-0's and read-chat-2's answer, four entries per key: per key what was read (size 0: gone), 'wrongtype', or null (a NUL in a value: read it without the script). */
function listedHashes(r: Reply, key: string): Array<ListedHash | 'wrongtype' | null> {
  const a = row(r, key)
  const out: Array<ListedHash | 'wrongtype' | null> = []
  for (let i = 0; i + 3 < a.length; i += 4) {
    const count = Number(a[i])
    if (count === -1) {
      out.push('wrongtype')
      continue
    }
    const parts = count === 0 ? [] : String(a[i + 1]).split('\0')
    if (parts.length !== count) {
      out.push(null) // a NUL inside a value
      continue
    }
    const fields: Record<string, string> = {}
    for (let j = 0; j + 1 < parts.length; j += 2) fields[parts[j]!] = parts[j + 1]!
    out.push({ fields, size: Number(a[i + 2]), extra: Number(a[i + 3]) })
  }
  return out
}

/**
 * What a listing shows of the hashes of one SCAN batch: named fields, sizes, the head of a chat's
 * queue, a page of a lead's candidates (docs/redis-layout.md). The fields, the limit, the measured
 * field and the keys follow `fieldCount` in ARGV (the script's header). Read-only, so it is called
 * directly on the node that answered the SCAN, not through the ScriptRunner.
 */
export const READ_LISTING = defineScript({
  name: 'read-listing-0',
  keys: [],
  argv: { mode: 'str', fieldCount: 'int' },
  decode: listedHashes,
  // Read-only: a second run reads what is there then, as any read after a reconnect would.
  resent: (hashes) => hashes,
})

/** One chat's turn and the head of its queue, as read-listing-0 reads a chat (`chat inspect`, the dashboard). */
export const READ_CHAT = defineScript({
  name: 'read-chat-2',
  keys: ['state', 'queue'],
  argv: { limit: 'int', ticket: 'str?', fieldCount: 'int' },
  decode: (r, key): ListedHash | 'wrongtype' | null => listedHashes(r, key)[0] ?? null,
  resent: (h) => h,
})

/** Every script, for the checks that hold them against lua/ (names, key counts, documented ARGV). */
export const ALL_SCRIPTS = [
  SCHEMA_INIT,
  REPLICA_BEAT,
  REPLICA_STOP,
  TURN_ACQUIRE,
  TURN_RELEASE,
  LEASE_RENEW,
  LEASE_RENEW_MANY,
  LEAD_ACQUIRE,
  LEAD_RELEASE,
  LEAD_TRANSPORT,
  LEAD_YIELD,
  LOCK_ACQUIRE,
  LOCK_RENEW,
  LOCK_RELEASE,
  CHECKPOINT_SET,
  CHECKPOINT_CLEAR,
  HANDOVER_SET,
  HANDOVER_CLEAR,
  HANDOVER_TAKE,
  ADMIN_CHAT_RELEASE,
  ADMIN_CHAT_SKIP,
  ADMIN_CHAT_EVICT,
  ADMIN_LEAD_REVOKE,
  ADMIN_YIELD_CANCEL,
  ADMIN_LEAD_EVICT,
  ADMIN_LOCK_RELEASE,
  ADMIN_CHECKPOINT_RM,
  ADMIN_CHECKPOINT_EXTEND,
  ADMIN_HANDOVER_RM,
  ADMIN_REPLICA_EVICT,
  READ_LISTING,
  READ_CHAT,
] as const
