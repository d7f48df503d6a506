/**
 * Pure decoders from raw Redis replies (hash fields) to typed snapshots. The store, the CLI and the
 * dashboard all decode through these, so they agree on what a field means. No I/O here.
 * Every time is Redis's clock in ms (absolute); callers turn it into "12s ago" with Redis's now.
 */
import { CHECKPOINT_FIELDS as CP, HANDOVER_FIELDS as HO, LEAD_FIELDS as L, LOCK_FIELDS as K, REPLICA_FIELDS as R } from '../wire/hashes.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import type { RedisKey } from '../keys.js'
import type { Holder, HeldSummary, ReplicaInfo, ReplicaStats } from '../wire/types.js'
import { decodeHeldSummary } from '../wire/heartbeat.js'
import { parseBoundedJson } from '../wire/json.js'
import { CHAT_FIELDS as C, ticketsOf, type QueuedTicket } from '../wire/chat.js'

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Hash = Record<string, string>

function int(rawKey: RedisKey, h: Hash, field: string): number | null {
  const v = h[field]
  if (v === undefined || v === '') return null
  const n = Number(v)
  // Past 2^53 an integer is not exact (a fence would repeat, a time is centuries away): corrupt, never shown.
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n))
    throw new CorruptStateError(rawKey, `field ${field} is not an integer below 2^53: ${JSON.stringify(v.slice(0, 40))}`)
  return n
}

/** The numbers of a JSON record (a heartbeat's info and stats): each present one finite, at most 2^53 in size; else corrupt. */
function numbers<T>(rawKey: RedisKey, field: string, v: T | null, names: string[], nullable: string[] = []): T | null {
  if (v === null) return null
  if (typeof v !== 'object' || Array.isArray(v)) throw new CorruptStateError(rawKey, `field ${field} is not an object`)
  const o = v as Record<string, unknown>
  for (const k of names) {
    const x = o[k]
    if (x === undefined || (x === null && nullable.includes(k))) continue
    if (typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) > Number.MAX_SAFE_INTEGER) {
      throw new CorruptStateError(rawKey, `field ${field}.${k} is not a number: ${JSON.stringify(x)?.slice(0, 40) ?? String(x)}`)
    }
  }
  return v
}

function reqInt(rawKey: RedisKey, h: Hash, field: string): number {
  const v = int(rawKey, h, field)
  if (v === null) throw new CorruptStateError(rawKey, `field ${field} is missing`)
  return v
}

function json<T = Json>(rawKey: RedisKey, h: Hash, field: string): T | null {
  const v = h[field]
  if (v === undefined || v === '') return null
  try {
    return parseBoundedJson(v) as T
  } catch (err) {
    throw new CorruptStateError(rawKey, `field ${field} ${(err as Error).message}`)
  }
}

function holder(h: Hash, rid: string, inc: string): Holder | null {
  return h[rid] ? { replicaId: h[rid]!, incarnation: h[inc] ?? '' } : null
}

// ---------------------------------------------------------------- chats

/** A queued ticket: its replica and incarnation, its deadline (skipped once Redis's clock passes it), when it was taken. */
export type TicketSnapshot = QueuedTicket

export interface ChatSnapshot {
  key: string
  /** Fence of the current or last grant (null: never granted since the key was created). */
  fence: number | null
  /**
   * `offered`: granted to a waiter of another replica that has not taken it up yet (its next poll
   * does); an offer not taken up lapses at expiresAtMs and passes on.
   */
  holder:
    | null
    | (Holder & {
        ticket: number
        expiresAtMs: number
        grantedAtMs: number
        lastRenewalMs: number
        waitedMs: number | null
        offered: boolean
      })
  previousHolder: Holder | null
  lastHolder: Holder | null
  lastTicket: number
  skippedTickets: number
  /**
   * Queued tickets in grant order: all of them when the hash was read whole, the head of the queue
   * when it was read bounded (a listing, `chat inspect`: ./bounded.ts) — `queued` says how many there are.
   */
  tickets: TicketSnapshot[]
  /** How many tickets are queued (the queue's length); more than `tickets` holds when only its head was read. */
  queued: number
}

/** The tickets a chat snapshot leaves out (read bounded: only the head of a long queue). */
export function ticketsLeftOut(c: Pick<ChatSnapshot, 'tickets' | 'queued'>): number {
  return Math.max(0, c.queued - c.tickets.length)
}

/** `queued`: the queue's length when the hash was read bounded (its t: fields are the head's); absent, the hash's own tickets. */
export function decodeChat(key: string, rawKey: RedisKey, h: Hash, queued?: number): ChatSnapshot {
  const tickets: TicketSnapshot[] = ticketsOf(h, (why) => new CorruptStateError(rawKey, why))
  const holderId = h[C.holder]
  return {
    key,
    fence: int(rawKey, h, C.fence),
    holder:
      holderId !== undefined
        ? {
            replicaId: holderId,
            incarnation: h[C.holderIncarnation] ?? '',
            ticket: reqInt(rawKey, h, C.holderTicket),
            expiresAtMs: reqInt(rawKey, h, C.expiresAt),
            grantedAtMs: int(rawKey, h, C.grantedAt) ?? 0,
            lastRenewalMs: int(rawKey, h, C.lastRenewal) ?? 0,
            waitedMs: int(rawKey, h, C.waited),
            offered: h[C.offered] === '1',
          }
        : null,
    previousHolder: holder(h, C.previousHolder, C.previousHolderIncarnation),
    lastHolder: holder(h, C.lastHolder, C.lastHolderIncarnation),
    lastTicket: int(rawKey, h, C.lastTicket) ?? 0,
    skippedTickets: int(rawKey, h, C.skipped) ?? 0,
    tickets,
    queued: queued === undefined || queued < tickets.length ? tickets.length : queued,
  }
}

// ---------------------------------------------------------------- leads

export type LeaseKindLabel = 'chat' | 'provider' | 'scheduler' | 'lead' | 'lock'

/** The operator's kind of a lead, from its name: provider:*, scheduler:*, or any other lead. */
export function leadKind(name: string): 'provider' | 'scheduler' | 'lead' {
  if (name.startsWith('provider:')) return 'provider'
  if (name.startsWith('scheduler:')) return 'scheduler'
  return 'lead'
}

/**
 * How a leader let go of a lead, as the scripts record it: `released` (it gave it back), `yielded`
 * (it gave it back while an operator's yield request was pending), `expired` (it stopped renewing and
 * the lease ran out), `revoked` (an operator's `provider yield --force`), `evicted` (`replica evict`).
 * null: not recorded (a hash written before this field existed).
 */
export type LetGo = 'released' | 'yielded' | 'expired' | 'revoked' | 'evicted'
const LET_GO: readonly string[] = ['released', 'yielded', 'expired', 'revoked', 'evicted']
const letGo = (v: string | undefined): LetGo | null => (v !== undefined && LET_GO.includes(v) ? (v as LetGo) : null)

export interface LeadSnapshot {
  key: string
  fence: number | null
  holder: null | (Holder & { expiresAtMs: number; sinceMs: number; lastRenewalMs: number })
  /** The leader's transport, as the leader recorded it (lead-transport-1): down since, yields at (Redis ms); null: up or never said. */
  transportDown: null | { sinceMs: number; yieldsAtMs: number }
  previousHolder: Holder | null
  lastHolder: Holder | null
  /** When the last holder let go (released or expired), while nobody holds it. */
  releasedAtMs: number | null
  /** How long the last handover took (let go -> next grant). */
  lastHandoverMs: number | null
  /** How the holder before the current one let go (the last handover), and who revoked or asked. */
  lastHandoverHow: LetGo | null
  lastHandoverBy: string | null
  /** While nobody holds it: how the last holder let go, and who revoked or asked. */
  letGoHow: LetGo | null
  letGoBy: string | null
  yieldRequest: null | { by: string; target: string | null; expiresAtMs: number; requestedAtMs: number }
  /** Replicas standing for it (campaigning), with their candidacy deadline: all, or a page of them (`candidateCount`). */
  candidates: Array<Holder & { deadlineMs: number }>
  /** How many replicas stand for it; more than `candidates` holds when only a page of them was read (./bounded.ts). */
  candidateCount: number
}

/** `size`: the hash's field count when only a page of its candidates was read (the rest of it is candidates). */
export function decodeLead(key: string, rawKey: RedisKey, h: Hash, size?: number): LeadSnapshot {
  const candidates: LeadSnapshot['candidates'] = []
  for (const [field, value] of Object.entries(h)) {
    if (!field.startsWith(L.candidatePrefix)) continue
    const m = /^(\d+)\|([\s\S]*)$/.exec(value)
    if (!m) throw new CorruptStateError(rawKey, `candidate field ${field} is malformed`)
    const deadlineMs = Number(m[1])
    if (!Number.isSafeInteger(deadlineMs)) throw new CorruptStateError(rawKey, `candidate field ${field} is malformed`)
    candidates.push({ incarnation: field.slice(L.candidatePrefix.length), replicaId: m[2]!, deadlineMs })
  }
  candidates.sort((a, b) => a.replicaId.localeCompare(b.replicaId))
  let named = 0
  for (const f in h) if (!f.startsWith(L.candidatePrefix)) named++
  const candidateCount = size === undefined ? candidates.length : Math.max(candidates.length, size - named)
  const yexp = int(rawKey, h, L.yieldExpiresAt)
  return {
    key,
    fence: int(rawKey, h, L.fence),
    holder:
      h[L.holder] !== undefined
        ? {
            replicaId: h[L.holder]!,
            incarnation: h[L.holderIncarnation] ?? '',
            expiresAtMs: reqInt(rawKey, h, L.expiresAt),
            sinceMs: int(rawKey, h, L.grantedAt) ?? 0,
            lastRenewalMs: int(rawKey, h, L.lastRenewal) ?? 0,
          }
        : null,
    transportDown:
      h[L.holder] !== undefined && h[L.transportDownSince] !== undefined
        ? { sinceMs: reqInt(rawKey, h, L.transportDownSince), yieldsAtMs: int(rawKey, h, L.transportYieldsAt) ?? 0 }
        : null,
    previousHolder: holder(h, L.previousHolder, L.previousHolderIncarnation),
    lastHolder: holder(h, L.lastHolder, L.lastHolderIncarnation),
    releasedAtMs: int(rawKey, h, L.releasedAt),
    lastHandoverMs: int(rawKey, h, L.handoverMs),
    lastHandoverHow: letGo(h[L.handoverHow]),
    lastHandoverBy: h[L.handoverBy] ?? null,
    letGoHow: letGo(h[L.releasedHow]),
    letGoBy: h[L.releasedBy] ?? null,
    yieldRequest:
      h[L.yieldBy] !== undefined && yexp !== null
        ? { by: h[L.yieldBy]!, target: h[L.yieldTarget] || null, expiresAtMs: yexp, requestedAtMs: int(rawKey, h, L.yieldAt) ?? 0 }
        : null,
    candidates,
    candidateCount,
  }
}

// ---------------------------------------------------------------- locks

export interface LockSnapshot {
  key: string
  fence: number | null
  holder: null | { owner: string; expiresAtMs: number; acquiredAtMs: number }
  releasedAtMs: number | null
}

export function decodeLock(key: string, rawKey: RedisKey, h: Hash): LockSnapshot {
  return {
    key,
    fence: int(rawKey, h, K.fence),
    holder:
      h[K.token] !== undefined
        ? { owner: h[K.owner] ?? '', expiresAtMs: reqInt(rawKey, h, K.expiresAt), acquiredAtMs: int(rawKey, h, K.acquiredAt) ?? 0 }
        : null,
    releasedAtMs: int(rawKey, h, K.releasedAt),
  }
}

// ---------------------------------------------------------------- checkpoints

export interface CheckpointOwner extends Holder {
  /** The writer's chat-turn fence (null for an unfenced write). */
  fence: number | null
}

export interface FlowCheckpoint {
  key: string
  flow: string
  step: string
  state: Json
  /** Compare-and-set revision: pass it to setCheckpointIf / clearCheckpointIf. */
  revision: number
  owner: CheckpointOwner | null
  /** Redis ms of the last write. */
  updatedAt: number
  /** Present for forward (ephemeral) checkpoints of non-persistent flows. */
  ephemeral: { ttlMs: number; fingerprint: string } | null
  /** The saved inbound answer of a suspended step, if any. */
  answer: Json | null
  answerBytes: number
  /** The length of the stored data (state and saved answer) when it was measured instead of read (a listing): `state` and `answer` are then null. */
  dataBytes?: number
}

/** `dataBytes`: the data's length when the hash was read without it (a listing, ./bounded.ts). */
export function decodeCheckpoint(key: string, rawKey: RedisKey, h: Hash, dataBytes?: number): FlowCheckpoint {
  if (h[CP.revision] === undefined) throw new CorruptStateError(rawKey, 'checkpoint has no revision')
  const data = json<{ state?: Json; answer?: Json }>(rawKey, h, CP.data) ?? {}
  if (typeof data !== 'object' || Array.isArray(data)) throw new CorruptStateError(rawKey, 'checkpoint data is not an object')
  return {
    key,
    flow: h[CP.flow] ?? '',
    step: h[CP.step] ?? '',
    state: data.state ?? null,
    revision: reqInt(rawKey, h, CP.revision),
    owner: h[CP.ownerReplica]
      ? { replicaId: h[CP.ownerReplica]!, incarnation: h[CP.ownerIncarnation] ?? '', fence: int(rawKey, h, CP.ownerFence) }
      : null,
    updatedAt: int(rawKey, h, CP.updatedAt) ?? 0,
    ephemeral: h[CP.ephemeral] === '1' ? { ttlMs: int(rawKey, h, CP.ttl) ?? 0, fingerprint: h[CP.fingerprint] ?? '' } : null,
    answer: data.answer ?? null,
    answerBytes: int(rawKey, h, CP.answerBytes) ?? 0,
    ...(dataBytes !== undefined && h[CP.data] === undefined ? { dataBytes } : {}),
  }
}

// ---------------------------------------------------------------- handover markers

export interface HandoverMarker {
  key: string
  /** The async conversation's name (what a 'restart' fallback re-enters). */
  name: string
  replicaId: string
  incarnation: string
  /** Redis ms since the conversation has been waiting. */
  since: number
  updatedAt: number
  data: Json
  /** The writer's chat-turn fence (null: written unfenced, or by an older version of the library). */
  fence: number | null
  /** The length of `data` when it was measured instead of read (a listing, ./bounded.ts): `data` is then null. */
  dataBytes?: number
}

/** `dataBytes`: the data's length when the hash was read without it (a listing, ./bounded.ts). */
export function decodeHandover(key: string, rawKey: RedisKey, h: Hash, dataBytes?: number): HandoverMarker {
  if (h[HO.name] === undefined) throw new CorruptStateError(rawKey, 'handover marker has no name')
  return {
    key,
    name: h[HO.name]!,
    replicaId: h[HO.replicaId] ?? '',
    incarnation: h[HO.incarnation] ?? '',
    since: int(rawKey, h, HO.since) ?? 0,
    updatedAt: int(rawKey, h, HO.updatedAt) ?? 0,
    data: json(rawKey, h, HO.data),
    fence: int(rawKey, h, HO.fence),
    ...(dataBytes !== undefined && h[HO.data] === undefined ? { dataBytes } : {}),
  }
}

// ---------------------------------------------------------------- one chat whole

/** One chat as `chat inspect` reads it: state, checkpoint (and its TTL) and handover marker, at Redis's now. */
export interface ChatDetail {
  chat: ChatSnapshot | null
  checkpoint: FlowCheckpoint | null
  /** ms until an ephemeral checkpoint expires. */
  checkpointTtlMs: number | null
  handover: HandoverMarker | null
  /** ms until the handover marker expires (null: no TTL, or no marker). */
  handoverTtlMs: number | null
  /** Redis's clock when read. */
  nowMs: number
}

// ---------------------------------------------------------------- replicas

export interface ReplicaSnapshot {
  replicaId: string
  incarnation: string
  info: ReplicaInfo
  stats: ReplicaStats
  leases: HeldSummary
  beatAtMs: number
  expiresAtMs: number
  /** Redis's clock minus the replica's at its last beat (includes one-way latency). */
  clockSkewMs: number | null
  /** An operator evicted this incarnation. */
  evictedIncarnation: string | null
}

export function decodeReplica(replicaId: string, rawKey: RedisKey, h: Hash): ReplicaSnapshot {
  const beat = reqInt(rawKey, h, R.beat)
  const cw = int(rawKey, h, R.wallClock)
  return {
    replicaId: h[R.id] ?? replicaId,
    incarnation: h[R.incarnation] ?? '',
    info: numbers(rawKey, 'info', json<ReplicaInfo>(rawKey, h, R.info), ['pid', 'startedAt', 'leaseMs', 'renewMs']) ?? {
      host: '',
      pid: 0,
      version: '',
      startedAt: 0,
      leaseMs: 0,
    },
    stats: numbers(
      rawKey,
      'stats',
      json<ReplicaStats>(rawKey, h, R.stats),
      ['turnsGranted', 'waitingNow', 'oldestWaitMs', 'turnsShed', 'waitP99Ms', 'leasesLost', 'leadsHeld', 'turnsHeld'],
      ['oldestWaitMs', 'waitP99Ms'],
    ) ?? {
      turnsGranted: 0,
      waitingNow: 0,
      waitP99Ms: null,
      leasesLost: 0,
      leadsHeld: 0,
      turnsHeld: 0,
    },
    leases: decodeHeldSummary(h[R.leases], (why) => new CorruptStateError(rawKey, why)),
    beatAtMs: beat,
    expiresAtMs: reqInt(rawKey, h, R.expiresAt),
    clockSkewMs: cw === null ? null : beat - cw,
    evictedIncarnation: h[R.evicted] ?? null,
  }
}
