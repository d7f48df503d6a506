/**
 * The fields of every hash but the chat's (that one is CHAT_FIELDS in ./chat.ts), for TypeScript:
 * one table per hash of docs/redis-layout.md. The Lua scripts name the same fields through the
 * tables of lua/includes/ (LEAD in lead-fields.lua, LOCK in lock.lua, CHECKPOINT in checkpoint.lua,
 * HANDOVER in handover.lua, REPLICA in replica.lua, SCHEMA in schema.lua), which the loader folds
 * into string literals (src/scripts/load.ts); test/integration/hash-schema.test.ts runs each of them
 * in Redis, checks that it equals its table here, and that every field the scripts write is named.
 */

/** A lead hash P:l:<name>. The holder's fields are named as a chat's are (lease-renew renews both). */
export const LEAD_FIELDS = {
  /** Fence of the current (or last) grant. */
  fence: 'f',
  /** Holder's replicaId and incarnation: only while held. */
  holder: 'h',
  holderIncarnation: 'hi',
  /** Lease expiry, leading since, last renewal (Redis ms): only while held. */
  expiresAt: 'exp',
  grantedAt: 'g',
  lastRenewal: 'lr',
  /** The last holder (kept after release). */
  lastHolder: 'lh',
  lastHolderIncarnation: 'lhi',
  /** The holder before the current grant (`previousHolder`). */
  previousHolder: 'ph',
  previousHolderIncarnation: 'phi',
  /** The leader's transport is down since (Redis ms), and it yields at (Redis ms) unless it comes back: only while held. */
  transportDownSince: 'td',
  transportYieldsAt: 'tdy',
  /** When the last holder let go, while nobody leads. */
  releasedAt: 'rel',
  /** How it let go: `released`, `yielded`, `expired`, `revoked`, `evicted`. */
  releasedHow: 'rw',
  /** By whom (an operator), when said. */
  releasedBy: 'rb',
  /** The last handover: `rel` → next grant (ms), how (`rw`) and by whom (`rb`), moved here by the grant. */
  handoverMs: 'hg',
  handoverHow: 'hw',
  handoverBy: 'hb',
  /** A pending yield request: by whom, target replicaId (empty: any standby), until, when. */
  yieldBy: 'yr',
  yieldTarget: 'yt',
  yieldExpiresAt: 'yexp',
  yieldAt: 'yat',
  /** `c:<incarnation>` = `deadline|replicaId` of each replica standing as a candidate. */
  candidatePrefix: 'c:',
} as const

/** A fenced lock's hash P:k:<lock>. */
export const LOCK_FIELDS = {
  /** The holder's token: only while held. */
  token: 'tk',
  /** Fence of the current (or last) acquisition. */
  fence: 'f',
  /** Expiry and acquisition time (Redis ms): only while held. */
  expiresAt: 'exp',
  acquiredAt: 'g',
  /** The owner's description (`host:pid` unless given). */
  owner: 'o',
  /** When it was last released. */
  releasedAt: 'rel',
} as const

/** A conversation checkpoint's hash P:cp:<chat>. */
export const CHECKPOINT_FIELDS = {
  /** `max(last + 1, Redis TIME in µs)`. */
  revision: 'rev',
  flow: 'flow',
  step: 'step',
  /** JSON `{ state, answer? }`. */
  data: 'd',
  /** The writer: replicaId, incarnation, chat-turn fence (empty for an unfenced write). */
  ownerReplica: 'oi',
  ownerIncarnation: 'oinc',
  ownerFence: 'of',
  /** Redis ms of the write. */
  updatedAt: 'at',
  /** Ephemeral (forward) checkpoints: `1`, their TTL in ms, the flow's fingerprint. */
  ephemeral: 'eph',
  ttl: 'ttl',
  fingerprint: 'fp',
  /** Bytes of the saved answer. */
  answerBytes: 'ab',
  /** The id of the write that stored it (a re-sent write answers with its revision). */
  writeId: 'wid',
} as const

/** A handover marker's hash P:ho:<chat>. */
export const HANDOVER_FIELDS = {
  /** The async conversation's name. */
  name: 'name',
  /** The replica and incarnation that left the marker. */
  replicaId: 'rid',
  incarnation: 'inc',
  /** When the conversation started waiting (kept while the same one keeps waiting). */
  since: 'since',
  /** The last write. */
  updatedAt: 'at',
  /** The data given, as JSON, or the empty string for none. */
  data: 'd',
  /** The writer's chat-turn fence; empty or absent for an unfenced write. */
  fence: 'of',
} as const

/** A replica's heartbeat record P:r:<replicaId>. */
export const REPLICA_FIELDS = {
  /** The replicaId and its incarnation. */
  id: 'id',
  incarnation: 'inc',
  /** JSON: host, pid, version, startedAt, leaseMs, renewMs. */
  info: 'info',
  /** JSON counters. */
  stats: 'stats',
  /** JSON: what it holds, waits for and campaigns for (./heartbeat.ts). */
  leases: 'leases',
  /** Last beat and heartbeat expiry (Redis ms). */
  beat: 'beat',
  expiresAt: 'exp',
  /** The replica's own wall clock at the beat (ms). */
  wallClock: 'cw',
  /** An evicted incarnation (its beats are refused), and when. */
  evicted: 'ev',
  evictedAt: 'evat',
} as const

/** A prefix's schema record P:schema. */
export const SCHEMA_FIELDS = {
  version: 'version',
  /** `standalone` or `cluster`. */
  layout: 'layout',
  /** Redis ms of the first write. */
  createdAt: 'createdAt',
} as const
