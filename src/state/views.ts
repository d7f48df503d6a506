/**
 * Views of the decoded state for people: the rows the CLI prints (and puts in --json) and the
 * dashboard renders. Pure functions of snapshots and Redis's now — no I/O, no formatting, no
 * colours — so the CLI and the dashboard show the same thing and both are tested without Redis.
 *
 * Every lease, chat or lead row carries `key` (the runtime's name), `kind`, `replicaId`,
 * `incarnation`, `fence` and `expiresInMs` (from Redis's clock; negative once expired).
 */
import type { Holder } from '../wire/types.js'
import type { ChatSnapshot, FlowCheckpoint, HandoverMarker, Json, LeadSnapshot, LockSnapshot, ReplicaSnapshot } from './decode.js'
import {
  fingerprintMismatch,
  removeCommand,
  staleCheckpointWrite,
  type DeployedFingerprints,
  type StaleCheckpointWrite,
} from './checkpoint-incidents.js'
import { leadKind, type ChatDetail, type LeaseKindLabel, type LetGo } from './decode.js'
import {
  absentReplicaState,
  chatHealth,
  leadHealth,
  leaseHealth,
  liveness,
  lockHealth,
  replicaHealth,
  ticketState,
  type ChatFinding,
  type HolderStatus,
  type ChatHealth,
  type ChatState,
  type LeadState,
  type TransportDown,
  type LeaseState,
  type Liveness,
  type ReplicaState,
  ageMs,
  LEAD_WORDS,
  TURN_WORDS,
  type Severity,
  type TicketState,
} from './health.js'

/**
 * Types of the entries of the event stream `P:events` (docs/redis-layout.md): what replicas log,
 * the operators' audit records, and `corrupt` for an entry the reader could not decode.
 */
export const EVENT_TYPES = [
  'replica-start',
  'replica-stop',
  'leader',
  'follower',
  'lead-released',
  'lease-lost',
  'handover',
  'server-changed',
  'intervention',
  'corrupt',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

// ---------------------------------------------------------------- replicas

export interface ReplicaRow {
  kind: 'replica'
  replicaId: string
  incarnation: string
  state: ReplicaState
  /** Why, in words (health.ts decides). */
  reason: string
  /** null for a replica known only by what still names it (dead, stale) or by its tombstone. */
  heartbeatAgeMs: number | null
  /** How often it beats (and renews its leases). */
  renewMs: number | null
  /** How far its last beat is past that interval (0: on time). */
  renewalOverdueMs: number | null
  expiresInMs: number | null
  host: string | null
  pid: number | null
  version: string | null
  startedAt: number | null
  leaseMs: number | null
  leasesHeld: number
  turnsHeld: number
  leadsHeld: number
  turnsGranted: number | null
  /** Messages it refused at once as 'overloaded' (maxWaiting were waiting); 0 from a record older than the count. */
  turnsShed: number | null
  waitingNow: number | null
  /** How long its longest-waiting message had waited at its last beat (null: none waited, or no record). */
  oldestWaitMs: number | null
  waitP99Ms: number | null
  leasesLost: number | null
  clockSkewMs: number | null
}

export function replicaRow(r: ReplicaSnapshot, nowMs: number): ReplicaRow {
  const health = replicaHealth(r, nowMs)
  return {
    kind: 'replica',
    replicaId: r.replicaId,
    incarnation: r.incarnation,
    state: health.state,
    reason: health.reason,
    heartbeatAgeMs: health.heartbeatAgeMs,
    renewMs: health.renewMs,
    renewalOverdueMs: health.renewalOverdueMs,
    expiresInMs: health.expiresInMs,
    host: r.info.host,
    pid: r.info.pid,
    version: r.info.version,
    startedAt: r.info.startedAt,
    leaseMs: r.info.leaseMs,
    leasesHeld: r.stats.turnsHeld + r.stats.leadsHeld,
    turnsHeld: r.stats.turnsHeld,
    leadsHeld: r.stats.leadsHeld,
    turnsGranted: r.stats.turnsGranted,
    turnsShed: r.stats.turnsShed ?? 0,
    waitingNow: r.stats.waitingNow,
    oldestWaitMs: r.stats.oldestWaitMs ?? null,
    waitP99Ms: r.stats.waitP99Ms,
    leasesLost: r.stats.leasesLost,
    clockSkewMs: r.clockSkewMs,
  }
}

/** What the store still attributes to a replica incarnation: a turn or lead it holds, a ticket it queued. */
export interface ReplicaReference extends Holder {
  what: 'turn' | 'lead' | 'ticket'
}

/** Everything in these chats and leads that names a replica incarnation. */
export function replicaReferences(chats: ChatSnapshot[], leads: LeadSnapshot[]): ReplicaReference[] {
  const out: ReplicaReference[] = []
  for (const c of chats) {
    if (c.holder) out.push({ replicaId: c.holder.replicaId, incarnation: c.holder.incarnation, what: 'turn' })
    for (const t of c.tickets) out.push({ replicaId: t.replicaId, incarnation: t.incarnation, what: 'ticket' })
  }
  for (const l of leads) if (l.holder) out.push({ replicaId: l.holder.replicaId, incarnation: l.holder.incarnation, what: 'lead' })
  return out
}

/**
 * Every replica: the heartbeat records (live, late, expired), and with `all` also the evicted ones
 * (their tombstones) and the incarnations the store still names that have no live record (dead,
 * stale) — with what they hold, so a zombie's leftovers are visible.
 */
export function replicaRows(
  records: ReplicaSnapshot[],
  nowMs: number,
  extra: { tombstones?: Array<{ replicaId: string; incarnation: string }>; references?: ReplicaReference[] } = {},
): ReplicaRow[] {
  const rows = records.map((r) => replicaRow(r, nowMs))
  const known = new Set(rows.map((r) => `${r.replicaId}\u0000${r.incarnation}`))
  const blank = (replicaId: string, incarnation: string, state: ReplicaState): ReplicaRow => ({
    kind: 'replica',
    replicaId,
    incarnation,
    state,
    reason:
      state === 'evicted'
        ? `${replicaId} was evicted by an operator: its beats are refused`
        : state === 'stale'
          ? `an earlier incarnation of ${replicaId}, which restarted: what it holds is not renewed`
          : `no heartbeat record of ${replicaId} (its last beat is older than the record is kept, or it never beat under this prefix): what it holds is not renewed`,
    heartbeatAgeMs: null,
    renewMs: null,
    renewalOverdueMs: null,
    expiresInMs: null,
    host: null,
    pid: null,
    version: null,
    startedAt: null,
    leaseMs: null,
    leasesHeld: 0,
    turnsHeld: 0,
    leadsHeld: 0,
    turnsGranted: null,
    turnsShed: null,
    waitingNow: null,
    oldestWaitMs: null,
    waitP99Ms: null,
    leasesLost: null,
    clockSkewMs: null,
  })
  const byKey = new Map<string, ReplicaRow>()
  for (const t of extra.tombstones ?? []) {
    const k = `${t.replicaId}\u0000${t.incarnation}`
    if (!known.has(k) && !byKey.has(k)) byKey.set(k, blank(t.replicaId, t.incarnation, 'evicted'))
  }
  const live = liveness(records, nowMs)
  for (const ref of extra.references ?? []) {
    const k = `${ref.replicaId}\u0000${ref.incarnation}`
    if (known.has(k)) continue
    let row = byKey.get(k)
    if (!row) {
      row = blank(ref.replicaId, ref.incarnation, absentReplicaState(ref, live))
      byKey.set(k, row)
    }
    if (ref.what === 'turn') row.turnsHeld++
    else if (ref.what === 'lead') row.leadsHeld++
    if (ref.what !== 'ticket') row.leasesHeld++
  }
  return [...rows, ...byKey.values()].sort((a, b) => byText(a.replicaId, b.replicaId) || byText(a.incarnation, b.incarnation))
}

// ---------------------------------------------------------------- leases

/*
 * A listing keeps its 100,000 rows until it prints them, so what a row holds on to is what the garbage
 * collector copies and marks, again and again. Two things made that twice what the rows need:
 * - A holder's id and incarnation are slices of the Redis reply the hash was read from (V8 slices a
 *   long substring rather than copying it), and keep that whole reply alive: a row takes the live
 *   replica record's copy of the same text instead, when there is one.
 * - A reason built by concatenation is a tree of its pieces until it is read (some of them slices of
 *   the reply again); flat() reads a character of it, which makes V8 flatten it into one string.
 * Both, in leases ls over 100,000 leases: 145 -> 120 MB promoted by the scavenges, 2.5 -> 2.1 s of CPU.
 */

/** The same string, flattened into one piece (see above). */
function flat(s: string): string {
  s.charCodeAt(0)
  return s
}

export interface LeaseRow {
  kind: LeaseKindLabel
  /** The runtime's name: chat key, lead name or lock key. */
  key: string
  /** The holder; for a lock, the live replica whose host:pid matches its owner (else null). */
  replicaId: string | null
  incarnation: string | null
  /** Locks only: `host:pid` of the process that took it. */
  owner: string | null
  fence: number | null
  /** Until Redis expires the lease (negative: expired, not yet taken over). */
  expiresInMs: number
  /** ok, late (renewal overdue past the margin), expired, dead or stale holder (health.ts decides). */
  state: LeaseState
  reason: string
  /** Since the holder last renewed (null for locks: a renewal is not recorded). */
  lastRenewalAgoMs: number | null
  /** The holder's renewal interval, and how far its last renewal is past it (null: unknown). */
  renewMs: number | null
  renewalOverdueMs: number | null
  /** Since the grant. */
  heldForMs: number | null
  /** Is the holder's incarnation beating? null: unknown (a lock whose owner is no replica). */
  holderAlive: boolean | null
}

export interface LeaseSources {
  chats: ChatSnapshot[]
  leads: LeadSnapshot[]
  locks: LockSnapshot[]
  replicas: ReplicaSnapshot[]
}

/**
 * The lease row of one record at a time (null: nothing held), against one reading of the live
 * replicas and Redis's now: what leaseRows builds, and what a listing builds as its scan goes.
 */
export function leaseRowMaker(replicas: ReplicaSnapshot[], nowMs: number) {
  const live = liveness(replicas, nowMs)
  // A chat turn or a lead: held by a replica, renewed by it.
  const replicaLease = (
    kind: LeaseKindLabel,
    key: string,
    fence: number | null,
    h: Holder & { expiresAtMs: number; lastRenewalMs: number },
    grantedAtMs: number,
  ): LeaseRow => {
    const health = leaseHealth(h, live, nowMs, kind === 'chat' ? TURN_WORDS : LEAD_WORDS)
    const r = live.replica(h.replicaId)
    return {
      kind,
      key,
      replicaId: r ? r.replicaId : h.replicaId,
      incarnation: r?.incarnation === h.incarnation ? r.incarnation : h.incarnation,
      owner: null,
      fence,
      expiresInMs: health.expiresInMs,
      state: health.state,
      reason: flat(health.reason),
      lastRenewalAgoMs: health.lastRenewalAgoMs,
      renewMs: health.renewMs,
      renewalOverdueMs: health.renewalOverdueMs,
      heldForMs: grantedAtMs ? ageMs(nowMs, grantedAtMs) : null,
      holderAlive: health.holderAlive,
    }
  }
  return {
    chat: (c: ChatSnapshot): LeaseRow | null => (c.holder ? replicaLease('chat', c.key, c.fence, c.holder, c.holder.grantedAtMs) : null),
    lead: (l: LeadSnapshot): LeaseRow | null =>
      l.holder ? replicaLease(leadKind(l.key), l.key, l.fence, l.holder, l.holder.sinceMs) : null,
    lock: (k: LockSnapshot): LeaseRow | null => {
      if (!k.holder) return null
      const r = live.byOwner(k.holder.owner)
      const health = lockHealth(k.holder, live, nowMs)
      return {
        kind: 'lock',
        key: k.key,
        replicaId: r?.replicaId ?? null,
        incarnation: r?.incarnation ?? null,
        owner: k.holder.owner,
        fence: k.fence,
        expiresInMs: health.expiresInMs,
        state: health.state,
        reason: health.reason,
        lastRenewalAgoMs: null,
        renewMs: null,
        renewalOverdueMs: null,
        heldForMs: k.holder.acquiredAtMs ? ageMs(nowMs, k.holder.acquiredAtMs) : null,
        holderAlive: health.holderAlive,
      }
    },
  }
}

export function leaseRows(src: LeaseSources, nowMs: number): LeaseRow[] {
  const make = leaseRowMaker(src.replicas, nowMs)
  const rows: LeaseRow[] = []
  const add = (r: LeaseRow | null) => {
    if (r) rows.push(r)
  }
  for (const c of src.chats) add(make.chat(c))
  for (const l of src.leads) add(make.lead(l))
  for (const k of src.locks) add(make.lock(k))
  return sortLeases(rows, 'kind')
}

export const LEASE_KINDS: readonly LeaseKindLabel[] = ['chat', 'provider', 'scheduler', 'lead', 'lock']
export const LEASE_SORTS = ['kind', 'key', 'replica', 'fence', 'expires', 'renewal', 'held'] as const
export type LeaseSort = (typeof LEASE_SORTS)[number]

export interface LeaseFilter {
  kinds?: LeaseKindLabel[]
  replicaId?: string
  /** Only leases that expire within this many ms (expired ones included). */
  expiringWithinMs?: number
  /** Only leases whose holder's heartbeat is gone (or is another incarnation). */
  stale?: boolean
}

export function filterLeases(rows: LeaseRow[], f: LeaseFilter): LeaseRow[] {
  return rows.filter(
    (r) =>
      (!f.kinds?.length || f.kinds.includes(r.kind)) &&
      (f.replicaId === undefined || r.replicaId === f.replicaId) &&
      (f.expiringWithinMs === undefined || r.expiresInMs <= f.expiringWithinMs) &&
      (!f.stale || r.holderAlive === false),
  )
}

const byText = (a: string | null, b: string | null) => (a ?? '').localeCompare(b ?? '')
const byNum = (a: number | null, b: number | null) => (a ?? -Infinity) - (b ?? -Infinity)

const kindOrder = (k: LeaseKindLabel) => LEASE_KINDS.indexOf(k)

/** The orders of a lease listing: `--sort` of `leases ls`, and the dashboard's. */
export const LEASE_ORDER: Record<LeaseSort, (a: LeaseRow, b: LeaseRow) => number> = {
  kind: (a, b) => (a.kind === b.kind ? byText(a.key, b.key) : kindOrder(a.kind) - kindOrder(b.kind) || byText(a.key, b.key)),
  key: (a, b) => byText(a.key, b.key),
  replica: (a, b) => byText(a.replicaId, b.replicaId) || byText(a.key, b.key),
  fence: (a, b) => byNum(a.fence, b.fence),
  expires: (a, b) => a.expiresInMs - b.expiresInMs,
  renewal: (a, b) => byNum(b.lastRenewalAgoMs, a.lastRenewalAgoMs),
  held: (a, b) => byNum(b.heldForMs, a.heldForMs),
}

export function sortLeases(rows: LeaseRow[], by: LeaseSort): LeaseRow[] {
  return [...rows].sort(LEASE_ORDER[by])
}

// ---------------------------------------------------------------- chats

export interface ChatRow {
  kind: 'chat'
  key: string
  /** idle, ok, late (the holder is late to renew), attention, stuck (health.ts decides). */
  state: ChatState
  reason: string
  /** The holder (null: nobody holds the turn). */
  replicaId: string | null
  incarnation: string | null
  fence: number | null
  expiresInMs: number | null
  holderAlive: boolean | null
  /** The holder's lease: ok, late, expired, dead, stale. */
  holderState: LeaseState | null
  heldForMs: number | null
  /** Since the holder last renewed, and how far that is past its renewal interval. */
  lastRenewalAgoMs: number | null
  renewalOverdueMs: number | null
  queueLength: number
  /** How long the oldest queued ticket has waited. */
  oldestWaitMs: number | null
  /** Queued tickets whose replica is gone, restarted, or stopped polling — among the `ticketsRead` first of the queue. */
  staleTickets: number
  /**
   * The tickets read from the head of the queue, which `staleTickets` and the state were judged on:
   * all of them, or fewer than `queueLength` in a long queue (a listing reads a bounded head of each queue).
   */
  ticketsRead: number
}

/** A chat as every listing shows it (`chat ls`, the first fields of `chat inspect`, the dashboard's JSON). */
export function chatRow(c: ChatSnapshot, live: Liveness, nowMs: number, health: ChatHealth = chatHealth(c, live, nowMs)): ChatRow {
  const h = health.holder
  const r = c.holder ? live.replica(c.holder.replicaId) : null
  return {
    kind: 'chat',
    key: c.key,
    state: health.state,
    reason: flat(health.reason),
    replicaId: r ? r.replicaId : (c.holder?.replicaId ?? null),
    incarnation: r && r.incarnation === c.holder!.incarnation ? r.incarnation : (c.holder?.incarnation ?? null),
    fence: c.fence,
    expiresInMs: h ? h.expiresInMs : null,
    holderAlive: h ? h.holderAlive : null,
    holderState: h ? h.state : null,
    heldForMs: health.heldForMs,
    lastRenewalAgoMs: h ? h.lastRenewalAgoMs : null,
    renewalOverdueMs: h ? h.renewalOverdueMs : null,
    queueLength: health.queueLength,
    oldestWaitMs: health.oldestWaitMs,
    staleTickets: health.tickets.filter((t) => t !== 'alive').length,
    ticketsRead: c.tickets.length,
  }
}

/** The order of `chat ls`: the longest wait first, then by key. */
export const CHAT_ORDER = (a: ChatRow, b: ChatRow): number => byNum(b.oldestWaitMs, a.oldestWaitMs) || byText(a.key, b.key)

/**
 * The chat row of one chat at a time (null: an idle chat, unless `all`), against one reading of the
 * live replicas and Redis's now: what chatRows builds, and what a listing builds as its scan goes.
 */
export function chatRowMaker(replicas: ReplicaSnapshot[], nowMs: number, options: { all?: boolean } = {}) {
  const live = liveness(replicas, nowMs)
  return (c: ChatSnapshot): ChatRow | null =>
    options.all || c.holder || c.queued > 0 || c.tickets.length > 0 ? chatRow(c, live, nowMs) : null
}

/** Chats with a holder or a queue (with `all`, idle ones too: they only remember their last holder and fence). */
export function chatRows(chats: ChatSnapshot[], replicas: ReplicaSnapshot[], nowMs: number, options: { all?: boolean } = {}): ChatRow[] {
  const make = chatRowMaker(replicas, nowMs, options)
  const rows: ChatRow[] = []
  for (const c of chats) {
    const r = make(c)
    if (r) rows.push(r)
  }
  return rows.sort(CHAT_ORDER)
}

export interface TicketRow {
  ticket: number
  replicaId: string
  incarnation: string
  state: TicketState
  alive: boolean
  waitedMs: number
  /** Until it is skipped if its replica stops polling (negative: will be skipped). */
  deadlineInMs: number
}

/** One chat whole (`chat inspect`): the fields of its row in `chat ls`, and the detail. */
export interface ChatView extends ChatRow {
  exists: boolean
  holder: null | {
    replicaId: string
    incarnation: string
    ticket: number
    alive: boolean
    status: 'alive' | 'dead' | 'stale'
    heldForMs: number | null
    lastRenewalAgoMs: number | null
    renewMs: number | null
    renewalOverdueMs: number | null
    waitedMs: number | null
    /** Granted to a waiter of another replica that has not taken it up yet (it lapses with the lease if never). */
    offered: boolean
  }
  previousHolder: Holder | null
  lastHolder: Holder | null
  lastTicket: number
  skippedTickets: number
  tickets: TicketRow[]
  /** The ticket Redis grants next (when the holder lets go or its lease runs out). */
  nextTicket: number | null
  /** What the health model found about the turn and the queue (explainChat adds the checkpoint's). */
  findings: ChatFinding[]
  checkpoint: CheckpointRow | null
  /** The checkpoint was written from outside the turn current at the time (./checkpoint-incidents.ts), or null. */
  staleWrite: StaleCheckpointWrite | null
  handover: HandoverView | null
}

export function chatView(
  d: ChatDetail,
  replicas: ReplicaSnapshot[],
  key: string,
  opts: { turnWaitMs?: number; deployed?: DeployedFingerprints } = {},
): ChatView {
  const now = d.nowMs
  const live = liveness(replicas, now)
  const c = d.chat
  const h = c?.holder ?? null
  const health = c ? chatHealth(c, live, now, opts) : null
  const row: ChatRow =
    c && health
      ? chatRow(c, live, now, health)
      : {
          kind: 'chat',
          key,
          state: 'idle',
          reason: 'nobody holds the turn and nothing waits',
          replicaId: null,
          incarnation: null,
          fence: null,
          expiresInMs: null,
          holderAlive: null,
          holderState: null,
          heldForMs: null,
          lastRenewalAgoMs: null,
          renewalOverdueMs: null,
          queueLength: 0,
          oldestWaitMs: null,
          staleTickets: 0,
          ticketsRead: 0,
        }
  return {
    ...row,
    key,
    exists: Boolean(c || d.checkpoint || d.handover),
    holder: h
      ? {
          replicaId: h.replicaId,
          incarnation: h.incarnation,
          ticket: h.ticket,
          alive: live.isAlive(h),
          status: live.status(h),
          heldForMs: h.grantedAtMs ? ageMs(now, h.grantedAtMs) : null,
          lastRenewalAgoMs: health!.holder!.lastRenewalAgoMs,
          renewMs: health!.holder!.renewMs,
          renewalOverdueMs: health!.holder!.renewalOverdueMs,
          waitedMs: h.waitedMs,
          offered: h.offered,
        }
      : null,
    previousHolder: c?.previousHolder ?? null,
    lastHolder: c?.lastHolder ?? null,
    lastTicket: c?.lastTicket ?? 0,
    skippedTickets: c?.skippedTickets ?? 0,
    tickets: (c?.tickets ?? []).map((t, i) => {
      const state = health!.tickets[i]!
      return {
        ticket: t.ticket,
        replicaId: t.replicaId,
        incarnation: t.incarnation,
        state,
        alive: state === 'alive',
        waitedMs: now - t.enqueuedAtMs,
        deadlineInMs: t.deadlineMs - now,
      }
    }),
    nextTicket: health?.next?.ticket ?? null,
    findings: health?.findings ?? [],
    checkpoint: d.checkpoint ? checkpointRow(d.checkpoint, now, replicas, d.checkpointTtlMs, opts.deployed) : null,
    staleWrite: d.checkpoint ? staleCheckpointWrite(c ?? null, d.checkpoint) : null,
    handover: d.handover ? handoverView(d.handover, now, replicas, d.handoverTtlMs) : null,
  }
}

// ---------------------------------------------------------------- explain

export interface Finding {
  /** Stable identifier, e.g. `holder-dead`. */
  code: string
  severity: Severity
  message: string
  /** What an operator can do about it. */
  fix?: string
}

export interface Explanation {
  /** stuck: something blocks the chat now; late: the holder is late to renew; attention: it moves but something is off; ok; idle: no turn, no queue. */
  verdict: 'stuck' | 'late' | 'expired' | 'attention' | 'ok' | 'idle' | 'unknown'
  summary: string
  findings: Finding[]
}

/**
 * Why a chat is (or is not) stuck: the health model's findings about its turn and queue (chatView
 * carries them), and what its checkpoint and handover marker add.
 * `fingerprints`: the deployed flows' fingerprints (flow → fingerprint; `fingerprint` alone: the one of
 * the checkpoint's flow) — a mismatch with an ephemeral checkpoint is only knowable with them.
 */
export function explainChat(v: ChatView, opts: { fingerprint?: string; fingerprints?: DeployedFingerprints } = {}): Explanation {
  const key = v.key
  if (!v.exists) {
    return { verdict: 'unknown', summary: `no state for chat ${JSON.stringify(key)} under this prefix`, findings: [] }
  }
  const findings: Finding[] = [...v.findings]
  const h = v.holder
  const cp = v.checkpoint
  if (cp) {
    if (v.staleWrite) {
      findings.push({
        code: 'checkpoint-stale-write',
        severity: 'warning',
        message: v.staleWrite.message,
        fix: `check that the writer's runtime passes turn.fence to setCheckpointIf; remove it: ${v.staleWrite.fix}`,
      })
    } else if (cp.fence !== null && v.fence !== null && cp.fence < v.fence) {
      const holderNote = h
        ? `the holder ${h.replicaId} (fence ${v.fence}) has not written it yet`
        : `the turn has moved on to fence ${v.fence}`
      findings.push({
        code: 'checkpoint-older-fence',
        severity: cp.replicaId && h && cp.replicaId !== h.replicaId && !cp.ownerAlive ? 'warning' : 'info',
        message: `the checkpoint was written under an older fence ${cp.fence} by ${cp.replicaId ?? '?'}${cp.ownerAlive ? '' : ' (gone)'}; ${holderNote}, and resumes from it`,
      })
    } else if (cp.fence !== null && v.fence !== null && cp.fence > v.fence) {
      findings.push({
        code: 'checkpoint-newer-fence',
        severity: 'problem',
        message: `the checkpoint's owner fence ${cp.fence} is newer than the chat's fence ${v.fence}: the chat's turn state was lost (failover, eviction or a flush) after the checkpoint was written`,
        fix: 'run botmesh-coord doctor (maxmemory-policy, persistence); the next grant will be refused checkpoint writes until its fence passes it',
      })
    }
    if (cp.ephemeral) {
      const deployed = opts.fingerprints?.[cp.flow] ?? opts.fingerprint
      if (deployed !== undefined && deployed !== cp.fingerprint) {
        findings.push({
          code: 'fingerprint-mismatch',
          severity: 'problem',
          message: `the ephemeral checkpoint's flow fingerprint ${cp.fingerprint} differs from ${deployed}, the deployed ${cp.flow}: a replica running that flow version will not resume it (fallback changed: the conversation restarts)`,
          fix: `finish the rollout, or remove it: ${removeCommand(key, cp.revision)}`,
        })
      } else if (deployed === undefined) {
        findings.push({
          code: 'fingerprint-unchecked',
          severity: 'info',
          message: `ephemeral checkpoint (fingerprint ${cp.fingerprint}); pass --fingerprint ${cp.flow}=<fingerprint> to check it against the deployed flow`,
        })
      }
    }
  }
  const ho = v.handover
  if (ho && !ho.ownerAlive) {
    findings.push({
      code: 'handover-pending',
      severity: 'info',
      message: `an async conversation ${JSON.stringify(ho.name)} of ${ho.replicaId} (gone) waits: the next replica to take the chat applies its handover fallback`,
    })
  }
  const problems = findings.filter((f) => f.severity === 'problem')
  const warnings = findings.filter((f) => f.severity === 'warning')
  const verdict: Explanation['verdict'] = problems.length
    ? 'stuck'
    : v.state === 'late'
      ? 'late'
      : v.state === 'expired'
        ? 'expired'
        : warnings.length
          ? 'attention'
          : v.state === 'idle'
            ? 'idle'
            : 'ok'
  const summary =
    verdict === 'stuck'
      ? `stuck: ${problems[0]!.message}`
      : verdict === 'late' || verdict === 'expired'
        ? `${verdict}: ${v.reason}`
        : verdict === 'attention'
          ? `moving, but: ${warnings[0]!.message}`
          : `${verdict}: ${v.reason}`
  return { verdict, summary, findings }
}

// ---------------------------------------------------------------- providers and other leads

/** `whatsapp` → `provider:whatsapp`; a name that already starts with `provider:` is kept. */
export function providerLeadName(name: string): string {
  return name.startsWith('provider:') ? name : `provider:${name}`
}

/**
 * The lead names an operator may mean, most likely first: a name with a colon is exact
 * (`scheduler:report`, `provider:whatsapp`); a bare `whatsapp` means `provider:whatsapp`, or a lead
 * called exactly `whatsapp` (a tryLead name without a colon) — so every lead name is reachable.
 */
export function leadNameCandidates(name: string): string[] {
  return name.includes(':') ? [name] : [providerLeadName(name), name]
}

export interface StandbyRow {
  replicaId: string
  incarnation: string
  alive: boolean
  /** Until its candidacy lapses unless refreshed. */
  deadlineInMs: number
}

export interface LeadRow {
  kind: LeaseKindLabel
  key: string
  /** The leader (null: nobody leads). */
  replicaId: string | null
  incarnation: string | null
  fence: number | null
  /** ok, down (the leader's transport is down), late (the leader is late to renew), dead, stale, expired, vacant (health.ts decides). */
  state: LeadState
  reason: string
  expiresInMs: number | null
  holderAlive: boolean | null
  /** Redis ms since the leader leads. */
  sinceMs: number | null
  leadingForMs: number | null
  lastRenewalAgoMs: number | null
  /** The leader's renewal interval, and how far its last renewal is past it. */
  renewMs: number | null
  renewalOverdueMs: number | null
  previousHolder: Holder | null
  lastHolder: Holder | null
  /** Since nobody leads (the last holder let go or expired). */
  vacantForMs: number | null
  /** The leader's transport while down (down for, yields at, yields in), or null (up, or nobody leads). */
  transportDown: TransportDown | null
  /** How long the last handover took (let go → next grant). */
  lastHandoverMs: number | null
  /** How the leader before this one let go: released, yielded, expired, revoked, evicted (null: not recorded). */
  lastHandoverHow: LetGo | null
  /** Who revoked it, or whose yield request it answered. */
  lastHandoverBy: string | null
  /** While nobody leads: how the last leader let go, and by whom. */
  letGoHow: LetGo | null
  letGoBy: string | null
  pendingYield: null | { by: string; target: string | null; expiresInMs: number; requestedAgoMs: number }
  /** Replicas campaigning for it, other than the leader, whose candidacy has not lapsed — among the `candidatesRead`. */
  standbys: StandbyRow[]
  /** Candidacies recorded (lapsed ones and the leader's included), and how many of them were read: fewer when there are many (./bounded.ts). */
  candidates: number
  candidatesRead: number
}

export function leadRow(l: LeadSnapshot, replicas: ReplicaSnapshot[], nowMs: number): LeadRow {
  const live = liveness(replicas, nowMs)
  const h = l.holder
  const y = l.yieldRequest && l.yieldRequest.expiresAtMs > nowMs ? l.yieldRequest : null
  const health = leadHealth(l, live, nowMs)
  const leader = health.leader
  return {
    kind: leadKind(l.key),
    key: l.key,
    replicaId: h?.replicaId ?? null,
    incarnation: h?.incarnation ?? null,
    fence: l.fence,
    state: health.state,
    reason: health.reason,
    expiresInMs: leader ? leader.expiresInMs : null,
    holderAlive: leader ? leader.holderAlive : null,
    sinceMs: h?.sinceMs || null,
    leadingForMs: health.leadingForMs,
    lastRenewalAgoMs: leader ? leader.lastRenewalAgoMs : null,
    renewMs: leader ? leader.renewMs : null,
    renewalOverdueMs: leader ? leader.renewalOverdueMs : null,
    previousHolder: l.previousHolder,
    lastHolder: l.lastHolder,
    vacantForMs: health.vacantForMs,
    transportDown: health.transportDown,
    lastHandoverMs: l.lastHandoverMs,
    lastHandoverHow: l.lastHandoverHow,
    lastHandoverBy: l.lastHandoverBy,
    letGoHow: h ? null : l.letGoHow,
    letGoBy: h ? null : l.letGoBy,
    pendingYield: y
      ? { by: y.by, target: y.target, expiresInMs: y.expiresAtMs - nowMs, requestedAgoMs: y.requestedAtMs ? nowMs - y.requestedAtMs : 0 }
      : null,
    standbys: l.candidates
      .filter((c) => c.incarnation !== h?.incarnation && c.deadlineMs > nowMs)
      .map((c) => ({ replicaId: c.replicaId, incarnation: c.incarnation, alive: live.isAlive(c), deadlineInMs: c.deadlineMs - nowMs })),
    candidates: Math.max(l.candidateCount ?? 0, l.candidates.length),
    candidatesRead: l.candidates.length,
  }
}

export function leadRows(leads: LeadSnapshot[], replicas: ReplicaSnapshot[], nowMs: number, kinds?: LeaseKindLabel[]): LeadRow[] {
  return leads
    .filter((l) => !kinds || kinds.includes(leadKind(l.key)))
    .map((l) => leadRow(l, replicas, nowMs))
    .sort((a, b) => byText(a.key, b.key))
}

// ---------------------------------------------------------------- locks

export interface LockRow {
  kind: 'lock'
  key: string
  /** The live replica whose host:pid is the owner, when there is one. */
  replicaId: string | null
  incarnation: string | null
  owner: string | null
  fence: number | null
  held: boolean
  expiresInMs: number | null
  heldForMs: number | null
  holderAlive: boolean | null
  releasedAgoMs: number | null
}

export function lockRows(locks: LockSnapshot[], replicas: ReplicaSnapshot[], nowMs: number): LockRow[] {
  const live = liveness(replicas, nowMs)
  return locks
    .map((k): LockRow => {
      const r = k.holder ? live.byOwner(k.holder.owner) : null
      return {
        kind: 'lock',
        key: k.key,
        replicaId: r?.replicaId ?? null,
        incarnation: r?.incarnation ?? null,
        owner: k.holder?.owner ?? null,
        fence: k.fence,
        held: Boolean(k.holder && k.holder.expiresAtMs > nowMs),
        expiresInMs: k.holder ? k.holder.expiresAtMs - nowMs : null,
        heldForMs: k.holder?.acquiredAtMs ? nowMs - k.holder.acquiredAtMs : null,
        holderAlive: k.holder ? (r ? true : null) : null,
        releasedAgoMs: k.releasedAtMs ? nowMs - k.releasedAtMs : null,
      }
    })
    .sort((a, b) => byText(a.key, b.key))
}

// ---------------------------------------------------------------- checkpoints and handover markers

export interface CheckpointRow {
  kind: 'checkpoint'
  key: string
  flow: string
  step: string
  revision: number
  /** The writer. */
  replicaId: string | null
  incarnation: string | null
  /** The writer's chat-turn fence (null: an unfenced write). */
  fence: number | null
  ownerAlive: boolean
  updatedAgoMs: number | null
  ephemeral: boolean
  ttlMs: number | null
  /** Ephemeral checkpoints: until Redis drops it (null for persistent ones). */
  expiresInMs: number | null
  fingerprint: string | null
  answerBytes: number
  /** The length of the stored state and answer, measured by a listing instead of read (null: read whole, or not measured). */
  dataBytes: number | null
  /** The deployed fingerprint of its flow, when the operator gave it (--fingerprint flow=fp). */
  deployedFingerprint: string | null
  /** `changed`: an ephemeral checkpoint of another flow version, which the runtime will not resume; null otherwise or unchecked. */
  fallback: 'changed' | null
}

export function checkpointRow(
  cp: FlowCheckpoint,
  nowMs: number,
  replicas: ReplicaSnapshot[],
  pttlMs?: number | null,
  deployed: DeployedFingerprints = {},
): CheckpointRow {
  const live = liveness(replicas, nowMs)
  const eph = cp.ephemeral
  const mismatch = fingerprintMismatch(cp, deployed)
  return {
    kind: 'checkpoint',
    key: cp.key,
    flow: cp.flow,
    step: cp.step,
    revision: cp.revision,
    replicaId: cp.owner?.replicaId ?? null,
    incarnation: cp.owner?.incarnation ?? null,
    fence: cp.owner?.fence ?? null,
    ownerAlive: cp.owner ? live.isAlive(cp.owner) : false,
    updatedAgoMs: cp.updatedAt ? nowMs - cp.updatedAt : null,
    ephemeral: Boolean(eph),
    ttlMs: eph?.ttlMs ?? null,
    expiresInMs: eph ? (pttlMs ?? (cp.updatedAt ? cp.updatedAt + eph.ttlMs - nowMs : null)) : null,
    fingerprint: eph?.fingerprint ?? null,
    answerBytes: cp.answerBytes,
    dataBytes: cp.dataBytes ?? null,
    deployedFingerprint: eph && Object.prototype.hasOwnProperty.call(deployed, cp.flow) ? deployed[cp.flow]! : null,
    fallback: mismatch ? mismatch.fallback : null,
  }
}

/** Which checkpoints a listing or a bulk clean-up takes. */
export interface CheckpointFilter {
  ephemeral?: boolean
  persistent?: boolean
  flow?: string
  /** Only ephemeral checkpoints whose flow fingerprint is not this one (written by another flow version). */
  fingerprintNot?: string
  /** Only those whose last write is at least this old. */
  olderThanMs?: number
  /** Only those whose writer (that incarnation) has no live heartbeat. */
  ownerDead?: boolean
  /** The deployed flows' fingerprints: each row says whether the runtime will resume it. */
  deployed?: DeployedFingerprints
  /** Only ephemeral checkpoints of another version of a deployed flow (needs `deployed`). */
  mismatched?: boolean
}

export function checkpointRows(
  cps: FlowCheckpoint[],
  replicas: ReplicaSnapshot[],
  nowMs: number,
  filter: CheckpointFilter = {},
): CheckpointRow[] {
  return cps
    .filter(
      (c) =>
        (!filter.ephemeral || c.ephemeral !== null) &&
        (!filter.persistent || c.ephemeral === null) &&
        (filter.flow === undefined || c.flow === filter.flow) &&
        (filter.fingerprintNot === undefined || (c.ephemeral !== null && c.ephemeral.fingerprint !== filter.fingerprintNot)) &&
        (filter.olderThanMs === undefined || (c.updatedAt > 0 && nowMs - c.updatedAt >= filter.olderThanMs)),
    )
    .map((c) => checkpointRow(c, nowMs, replicas, undefined, filter.deployed))
    .filter((r) => !filter.ownerDead || (r.replicaId !== null && !r.ownerAlive))
    .filter((r) => !filter.mismatched || r.fallback !== null)
    .sort((a, b) => byText(a.key, b.key))
}

export interface HandoverRow {
  kind: 'handover'
  key: string
  /** The async conversation's name. */
  name: string
  replicaId: string
  incarnation: string
  ownerAlive: boolean
  waitingForMs: number | null
  updatedAgoMs: number | null
}

export function handoverRow(m: HandoverMarker, nowMs: number, replicas: ReplicaSnapshot[]): HandoverRow {
  const live = liveness(replicas, nowMs)
  return {
    kind: 'handover',
    key: m.key,
    name: m.name,
    replicaId: m.replicaId,
    incarnation: m.incarnation,
    ownerAlive: live.isAlive(m),
    waitingForMs: m.since ? nowMs - m.since : null,
    updatedAgoMs: m.updatedAt ? nowMs - m.updatedAt : null,
  }
}

export function handoverRows(markers: HandoverMarker[], replicas: ReplicaSnapshot[], nowMs: number): HandoverRow[] {
  return markers.map((m) => handoverRow(m, nowMs, replicas)).sort((a, b) => byText(a.key, b.key))
}

/** One handover marker whole (`handover inspect`, the dashboard's chat detail). */
export interface HandoverView extends HandoverRow {
  /** 'alive' | 'dead' (no heartbeat) | 'stale' (its replica restarted: a new incarnation), by the health model. */
  ownerStatus: HolderStatus
  /** Redis ms since its conversation waits (what `handover rm` is conditioned on, with the incarnation). */
  since: number
  /** Until Redis drops it by itself (null: no TTL). */
  expiresInMs: number | null
  /** Bytes of its data as stored (JSON). */
  dataBytes: number
  data: Json
  /** What the replica that takes the chat next will do with it, in words. */
  next: string
}

export function handoverView(m: HandoverMarker, nowMs: number, replicas: ReplicaSnapshot[], pttlMs: number | null): HandoverView {
  const status = liveness(replicas, nowMs).status(m)
  const row = handoverRow(m, nowMs, replicas)
  const fallback = `takes this marker and applies the handover fallback the bot configures for ${JSON.stringify(m.name)} (notify, restart, custom or drop)`
  return {
    ...row,
    ownerStatus: status,
    since: m.since,
    expiresInMs: pttlMs,
    dataBytes: m.data === null ? 0 : new TextEncoder().encode(JSON.stringify(m.data)).length,
    data: m.data,
    next:
      status === 'alive'
        ? `${m.replicaId} holds the conversation in memory and goes on with it when it gets the chat's next message; a replica that gets it instead ${fallback}`
        : `the conversation is gone with ${status === 'stale' ? `the earlier process of ${m.replicaId}` : m.replicaId}: the next replica to take the chat ${fallback}`,
  }
}

// ---------------------------------------------------------------- doctor helpers

export interface StaleTicketRow {
  key: string
  ticket: number
  replicaId: string
  incarnation: string
  state: Exclude<TicketState, 'alive'>
  waitedMs: number
}

/** Queued tickets of replicas that are gone, restarted or stopped polling (doctor, dashboard). */
export function staleTickets(chats: ChatSnapshot[], replicas: ReplicaSnapshot[], nowMs: number): StaleTicketRow[] {
  const live = liveness(replicas, nowMs)
  const out: StaleTicketRow[] = []
  for (const c of chats) {
    for (const t of c.tickets) {
      const state = ticketState(t, live, nowMs)
      if (state !== 'alive')
        out.push({
          key: c.key,
          ticket: t.ticket,
          replicaId: t.replicaId,
          incarnation: t.incarnation,
          state,
          waitedMs: nowMs - t.enqueuedAtMs,
        })
    }
  }
  return out
}

/** Leases of every kind whose holder no longer beats but Redis still honours (zombie holders). */
export function zombieLeases(rows: LeaseRow[]): LeaseRow[] {
  return rows.filter((r) => r.state === 'dead' || r.state === 'stale')
}

/** Leases whose holder beats but is late to renew them: frozen or partitioned (doctor, exporter). */
export function lateLeases(rows: LeaseRow[]): LeaseRow[] {
  return rows.filter((r) => r.state === 'late')
}
