/**
 * The one place that decides how things are doing: a replica, a lease (chat turn, lead, lock), a
 * queued ticket, a chat and a lead (provider). Every view calls it — `replicas ls`, `leases ls`,
 * `chat ls/inspect --explain`, `provider ls/status`, `doctor`, the dashboard, the write commands'
 * plans and the exporter — so the same lease reads the same everywhere. Pure: decoded snapshots and
 * Redis's now in, a state, the reason in words and the measured ages out.
 *
 * Late renewals. A replica renews its heartbeat and every lease it holds every `renewMs`
 * (`leaseMs / 3`, recorded in its heartbeat's `info`). A renewal older than that interval plus a
 * margin of half an interval is `late`: by then a healthy process has renewed (timer jitter, a
 * Redis round trip and a GC pause stay well inside half an interval), and half the lease is still
 * left before Redis lets it go — time for an operator or an alert to act.
 */
import type { Holder } from '../wire/types.js'
import type { ChatSnapshot, LeadSnapshot, LeaseKindLabel, ReplicaSnapshot, TicketSnapshot } from './decode.js'
import { DEFAULTS } from '../defaults.js'
import { formatDuration } from '../duration.js'

/** The margin past a renewal interval before a renewal counts as late, as a fraction of the interval. */

/**
 * The age of `atMs` at `nowMs` (both Redis ms), as a number (commands/output/time.ts spells ages as
 * text). A reader reads Redis's clock before it reads the keys: a renewal or grant written in between
 * is later than its now, and counts as just now (0), never as "in 1ms" or held for a negative time.
 */
export function ageMs(nowMs: number, atMs: number): number {
  return Math.max(0, nowMs - atMs)
}

export const LATE_MARGIN = 0.5

/** A queue whose live head has waited this long without the turn being granted is stuck. */
export const UNGRANTED_HEAD_MS = 5_000

/**
 * How a duration reads in a reason: `850ms`, `1.6s`, `42.3s`, `2m5s` — the CLI's one formatting
 * (formatDuration), so the same interval reads the same in a reason and in a column beside it.
 */
export function fmtMs(ms: number): string {
  return formatDuration(Math.abs(ms))
}

/** The renewal interval a heartbeat record says its replica uses (older records: a third of its lease). */
export function renewIntervalOf(r: ReplicaSnapshot): number {
  const leaseMs = r.info.leaseMs || r.expiresAtMs - r.beatAtMs
  return r.info.renewMs && r.info.renewMs > 0 ? r.info.renewMs : Math.max(1, Math.floor(leaseMs / 3))
}

/** How overdue a renewal is: 0 while within its interval, then the time past it. */
export function renewalOverdue(ageMs: number, renewMs: number): number {
  return Math.max(0, ageMs - renewMs)
}

/** Is a renewal this old late for this interval (past the interval plus the margin)? */
export function isLate(ageMs: number, renewMs: number): boolean {
  return ageMs > renewMs * (1 + LATE_MARGIN)
}

// ---------------------------------------------------------------- liveness

/** alive: this exact incarnation beats; dead: no heartbeat (or evicted); stale: the replicaId beats with another incarnation (a restart). */
export type HolderStatus = 'alive' | 'dead' | 'stale'

/** Who is alive, from the heartbeat records (present = alive until its `exp`). */
export interface Liveness {
  /** Is this exact incarnation of this replica beating? */
  isAlive(h: Holder): boolean
  status(h: Holder): HolderStatus
  /** A live replica whose heartbeat says it runs as `host:pid` (a lock's owner). */
  byOwner(owner: string): ReplicaSnapshot | null
  /** The live record of a replicaId. */
  replica(replicaId: string): ReplicaSnapshot | null
  /** The renewal interval of a live holder (from its heartbeat), or null. */
  renewMs(h: Holder): number | null
}

export function liveness(replicas: ReplicaSnapshot[], nowMs: number): Liveness {
  const byId = new Map<string, ReplicaSnapshot>()
  // host:pid → replica; null when several live replicas share it (one process, several coordinators).
  const byOwner = new Map<string, ReplicaSnapshot | null>()
  for (const r of replicas) {
    if (r.expiresAtMs <= nowMs) continue
    byId.set(r.replicaId, r)
    const owner = `${r.info.host}:${r.info.pid}`
    if (r.info.host) byOwner.set(owner, byOwner.has(owner) ? null : r)
  }
  const status = (h: Holder): HolderStatus => {
    const r = byId.get(h.replicaId)
    if (!r) return 'dead'
    if (r.evictedIncarnation && r.evictedIncarnation === h.incarnation) return 'dead'
    return r.incarnation === h.incarnation ? 'alive' : 'stale'
  }
  return {
    isAlive: (h) => status(h) === 'alive',
    status,
    byOwner: (owner) => byOwner.get(owner) ?? null,
    replica: (id) => byId.get(id) ?? null,
    renewMs: (h) => (status(h) === 'alive' ? renewIntervalOf(byId.get(h.replicaId)!) : null),
  }
}

// ---------------------------------------------------------------- replicas

/**
 * A replica, from its heartbeat record: `ok` (beating), `late` (its last beat is overdue past the
 * margin), `gone` (its heartbeat expired: the record is kept GONE_KEEP_MS past its last beat, so a
 * replica that froze, was cut off or was killed stays visible, with its last beat and what it held),
 * `evicted` (an operator's tombstone). From what still names it without a heartbeat record: `gone`
 * too (no record at all: its last beat is older than the record is kept) and `stale` (the replicaId
 * beats with another incarnation: an earlier process of a restarted replica).
 *
 * Never `dead`: from Redis alone, a frozen process (a SIGSTOP, a long GC pause, a partition) and a
 * killed one look the same until it beats again. What is known is how long there has been no beat.
 */
export type ReplicaState = 'ok' | 'late' | 'gone' | 'evicted' | 'stale'

/**
 * How long a heartbeat record is kept past its expiry (lua/replica-beat-2.lua sets the record's TTL
 * to leaseMs + this): the window in which `replicas ls` and `doctor` show a replica as `gone`. An
 * orderly stop deletes the record at once.
 */
export const GONE_KEEP_MS = 5 * 60_000

export interface ReplicaHealth {
  state: ReplicaState
  reason: string
  heartbeatAgeMs: number
  renewMs: number
  renewalOverdueMs: number
  expiresInMs: number
}

export function replicaHealth(r: ReplicaSnapshot, nowMs: number): ReplicaHealth {
  const age = ageMs(nowMs, r.beatAtMs)
  const renewMs = renewIntervalOf(r)
  const base = { heartbeatAgeMs: age, renewMs, renewalOverdueMs: renewalOverdue(age, renewMs), expiresInMs: r.expiresAtMs - nowMs }
  if (r.evictedIncarnation && r.evictedIncarnation === r.incarnation) {
    return { ...base, state: 'evicted', reason: `${r.replicaId} was evicted by an operator: its beats are refused` }
  }
  if (r.expiresAtMs <= nowMs) {
    return {
      ...base,
      state: 'gone',
      reason: `no heartbeat from ${r.replicaId} for ${fmtMs(age)} (every ${fmtMs(renewMs)}; it expired ${fmtMs(nowMs - r.expiresAtMs)} ago): frozen, cut off or killed without an orderly stop; it counts as gone, and what it held is not renewed`,
    }
  }
  if (isLate(age, renewMs)) {
    return {
      ...base,
      state: 'late',
      reason: `${r.replicaId} has not beaten for ${fmtMs(age)} (every ${fmtMs(renewMs)}): frozen or partitioned; its heartbeat ends in ${fmtMs(base.expiresInMs)}`,
    }
  }
  return { ...base, state: 'ok', reason: `${r.replicaId} beat ${fmtMs(age)} ago (every ${fmtMs(renewMs)})` }
}

/** The state of what names a replica incarnation that has no heartbeat record of its own. */
export function absentReplicaState(h: Holder, live: Liveness): 'gone' | 'stale' {
  return live.status(h) === 'stale' ? 'stale' : 'gone'
}

// ---------------------------------------------------------------- leases

/**
 * A lease (a chat turn or a lead; locks have no recorded renewal): `ok`, `late` (its holder's last
 * renewal is overdue past the margin: frozen or partitioned), `expired` (Redis no longer honours it;
 * the next poll or candidate takes it), `dead` (its holder has no heartbeat but the lease runs on:
 * a zombie), `stale` (the holder restarted: another incarnation beats). A lock whose owner is no
 * live replica is `ok` until it expires (its holder is unknown, not dead).
 */
export type LeaseState = 'ok' | 'late' | 'expired' | 'dead' | 'stale'

export interface LeaseHealth {
  state: LeaseState
  reason: string
  expiresInMs: number
  lastRenewalAgoMs: number | null
  /** The holder's renewal interval (null: unknown — a lock, or a holder without heartbeat). */
  renewMs: number | null
  /** How far the last renewal is past the interval (null: unknown). */
  renewalOverdueMs: number | null
  /** Is the holder's incarnation beating? null: unknown (a lock whose owner is no replica). */
  holderAlive: boolean | null
}

/** What a lease needs to be judged: its holder, expiry and last renewal (0: not recorded). */
export interface LeaseFacts extends Holder {
  expiresAtMs: number
  lastRenewalMs: number
}

/** `role`: who holds it in words (`holder`, `leader`); `lease`: what runs on (`the turn's lease`). */
/** How a chat turn's lease reads in a reason (every view of a turn passes these). */
export const TURN_WORDS = {
  lease: "the turn's lease",
  next: "the next waiter's poll takes the turn over, or the chat's next message gets it at once",
} as const
/** How a lead's lease reads in a reason. */
export const LEAD_WORDS = { role: 'leader', lease: 'the lead', next: 'the next candidate takes it over at its next try' } as const

/** `next`: what happens to it once expired (`taken over at the next waiter's poll…`). */
export function leaseHealth(
  l: LeaseFacts,
  live: Liveness,
  nowMs: number,
  words: { role?: string; lease?: string; next?: string } = {},
): LeaseHealth {
  const role = words.role ?? 'holder'
  const lease = words.lease ?? 'the lease'
  const expiresInMs = l.expiresAtMs - nowMs
  const status = live.status(l)
  const renewMs =
    live.renewMs(l) ?? (l.lastRenewalMs && l.expiresAtMs > l.lastRenewalMs ? Math.floor((l.expiresAtMs - l.lastRenewalMs) / 3) : null)
  const age = l.lastRenewalMs ? ageMs(nowMs, l.lastRenewalMs) : null
  const overdue = age !== null && renewMs !== null ? renewalOverdue(age, renewMs) : null
  // One object per lease (a listing judges 100,000 of them): the same fields, in the same order, whatever the state.
  const health = (state: LeaseState, reason: string): LeaseHealth => ({
    expiresInMs,
    lastRenewalAgoMs: age,
    renewMs,
    renewalOverdueMs: overdue,
    holderAlive: status === 'alive',
    state,
    reason,
  })
  if (expiresInMs <= 0) {
    // An expired lease is not held, whatever the record still says: Redis gives it to the next taker.
    return health(
      'expired',
      `not held: the ${role} ${l.replicaId}'s lease expired ${fmtMs(-expiresInMs)} ago (${status === 'alive' ? 'its replica beats but did not renew it: frozen, or lost it' : 'its replica has no heartbeat'}); ${words.next ?? 'the next taker gets it at once'}`,
    )
  }
  if (status === 'stale') {
    return health(
      'stale',
      `the ${role} ${l.replicaId} restarted (its incarnation ${l.incarnation.slice(0, 8)} no longer beats) but ${lease} runs ${fmtMs(expiresInMs)} more`,
    )
  }
  if (status === 'dead') {
    return health('dead', `the ${role} ${l.replicaId} has no heartbeat (dead or cut off) but ${lease} runs ${fmtMs(expiresInMs)} more`)
  }
  if (age !== null && renewMs !== null && isLate(age, renewMs)) {
    return health(
      'late',
      `${role} ${l.replicaId} has not renewed for ${fmtMs(age)} (every ${fmtMs(renewMs)}): frozen or partitioned; its lease ends in ${fmtMs(expiresInMs)}`,
    )
  }
  return health(
    'ok',
    `${role} ${l.replicaId} renews (${age === null ? 'not yet renewed' : `last ${fmtMs(age)} ago`}); ${lease} ends in ${fmtMs(expiresInMs)}`,
  )
}

/** A lock: held until it expires; its owner is a host:pid, a live replica's when one matches. */
export function lockHealth(l: { owner: string; expiresAtMs: number }, live: Liveness, nowMs: number): LeaseHealth {
  const expiresInMs = l.expiresAtMs - nowMs
  const r = live.byOwner(l.owner)
  const base = { expiresInMs, lastRenewalAgoMs: null, renewMs: null, renewalOverdueMs: null, holderAlive: r ? true : null }
  return expiresInMs <= 0
    ? { ...base, state: 'expired', reason: `the lock of ${l.owner} expired ${fmtMs(-expiresInMs)} ago` }
    : { ...base, state: 'ok', reason: `held by ${l.owner} for ${fmtMs(expiresInMs)} more` }
}

// ---------------------------------------------------------------- tickets

/** A queued ticket: its replica beats (alive), is gone (dead), restarted (stale), or stopped polling (expired). */
export type TicketState = 'alive' | 'dead' | 'stale' | 'expired'

export function ticketState(t: TicketSnapshot, live: Liveness, nowMs: number): TicketState {
  const s = live.status(t)
  if (s !== 'alive') return s
  return t.deadlineMs <= nowMs ? 'expired' : 'alive'
}

/** Why a ticket is not alive, in words. */
export function ticketReason(t: TicketSnapshot, state: TicketState, nowMs: number): string {
  switch (state) {
    case 'dead':
      return `its replica ${t.replicaId} has no heartbeat`
    case 'stale':
      return `it belongs to an earlier incarnation ${t.incarnation.slice(0, 8)} of ${t.replicaId} (restarted)`
    case 'expired':
      return `its replica ${t.replicaId} stopped polling it ${fmtMs(nowMs - t.deadlineMs)} ago`
    default:
      return `${t.replicaId} polls it`
  }
}

/**
 * The ticket Redis grants next, by the grant rule of the turn scripts (`grant_next`): nobody while a
 * holder's lease runs (unless it is revoked); then the oldest ticket whose deadline has not passed —
 * skipping, when the holder's lease ran out unrenewed, that holder's own tickets. `except`: a ticket
 * about to be dropped.
 */
export function nextGrant(chat: ChatSnapshot, nowMs: number, o: { revokeHolder?: boolean; except?: number } = {}): TicketSnapshot | null {
  const h = chat.holder
  if (h && !o.revokeHolder && h.expiresAtMs > nowMs) return null
  const deadIncarnation = h && !o.revokeHolder ? h.incarnation : null
  return chat.tickets.find((t) => t.ticket !== o.except && grantable(t, nowMs, deadIncarnation)) ?? null
}

/**
 * The grant rule for one queued ticket, as `grant_next` (lua/includes/turn.lua) applies it: it is
 * granted when it is live — its deadline, the later of its own and its incarnation's `w:` field, has
 * not passed — and is not a ticket of `deadIncarnation`, the holder whose lease ran out unrenewed. The
 * memory hub grants by it and the views predict by it; the contract suites tie both to the Lua.
 */
export function grantable(t: { incarnation: string; deadlineMs: number }, nowMs: number, deadIncarnation: string | null): boolean {
  return t.incarnation !== deadIncarnation && t.deadlineMs > nowMs
}

// ---------------------------------------------------------------- chats

export type Severity = 'problem' | 'warning' | 'info'

/** The reasons a chat's turn is not simply moving: stable codes (the exporter counts stuck chats by them). */
export const CHAT_REASONS = [
  'holder-dead',
  'holder-stale-incarnation',
  'holder-late',
  'holder-expired',
  'holder-slow',
  'head-ticket-dead',
  'head-ticket-stale',
  'head-ticket-expired',
  'queue-without-holder',
  'stale-tickets',
] as const
export type ChatReason = (typeof CHAT_REASONS)[number]

export interface ChatFinding {
  code: ChatReason
  severity: Severity
  message: string
  /** What an operator can do about it. */
  fix?: string
}

/**
 * A chat's turn: `idle` (no holder, nothing waits), `ok`, `late` (the holder is late to renew,
 * nothing is blocked yet), `expired` (the record still names a holder whose lease ran out: the turn
 * is not held, the next waiter's poll or the next message takes it), `attention` (it moves, but
 * something is off), `stuck` (something blocks it now: a dead or late holder with waiters, a dead
 * ticket at the head, a queue nobody is granted).
 */
export type ChatState = 'idle' | 'ok' | 'late' | 'expired' | 'attention' | 'stuck'

export interface ChatHealth {
  state: ChatState
  /** The first finding that decided the state, or a summary. */
  reason: string
  findings: ChatFinding[]
  holder: LeaseHealth | null
  heldForMs: number | null
  queueLength: number
  oldestWaitMs: number | null
  tickets: TicketState[]
  /** The ticket Redis grants next, if it were asked now. */
  next: TicketSnapshot | null
}

/** Quote a key for a shell command line when it needs it. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * The intervention that takes a held lease away, pinned to the fence seen: if the grant moved on
 * meanwhile (another operator, an expiry), it changes nothing and says who holds it now.
 */
export function pinnedRevoke(kind: LeaseKindLabel, key: string, fence: number | null): string {
  const pin = fence !== null ? ` --if-fence ${fence}` : ''
  if (kind === 'chat') return `botmesh-coord chat release ${shellWord(key)}${pin}`
  if (kind === 'lock') return `botmesh-coord lock release ${shellWord(key)}${pin}`
  return `botmesh-coord provider yield ${shellWord(key)} --force${pin}`
}

export function chatHealth(c: ChatSnapshot, live: Liveness, nowMs: number, opts: { turnWaitMs?: number } = {}): ChatHealth {
  const turnWaitMs = opts.turnWaitMs ?? DEFAULTS.turnWaitMs
  const key = shellWord(c.key)
  const findings: ChatFinding[] = []
  const h = c.holder
  const holder = h ? leaseHealth(h, live, nowMs, TURN_WORDS) : null
  const tickets = c.tickets.map((t) => ticketState(t, live, nowMs))
  // The queue's length; its tickets may be only the head of it (a bounded read: the rest is not judged here).
  const waiting = Math.max(c.queued ?? 0, c.tickets.length)
  const unread = waiting - c.tickets.length
  const heldForMs = h?.grantedAtMs ? ageMs(nowMs, h.grantedAtMs) : null
  if (h && holder) {
    const left = fmtMs(holder.expiresInMs)
    // Pinned to the fence seen here: if the turn moved on meanwhile, the release changes nothing.
    const release = pinnedRevoke('chat', c.key, c.fence)
    if (holder.state === 'dead' || holder.state === 'stale') {
      findings.push({
        code: holder.state === 'stale' ? 'holder-stale-incarnation' : 'holder-dead',
        severity: 'problem',
        message: holder.reason,
        fix: `wait ${left} for the lease to expire, or revoke it now: ${release}`,
      })
    } else if (holder.state === 'late') {
      findings.push({
        code: 'holder-late',
        severity: waiting ? 'problem' : 'warning',
        message: `${holder.reason}${waiting ? `; ${waiting} waiting` : ''}`,
        fix: `look at ${h.replicaId} (event loop, GC, network to Redis); to hand the turn on now: ${release}`,
      })
    } else if (holder.state === 'expired') {
      // Not held: the record still names the holder, but Redis grants the turn to the next taker.
      const next = nextGrant(c, nowMs)
      findings.push({
        code: 'holder-expired',
        severity: 'warning',
        message: `the turn is not held: ${h.replicaId}'s lease expired ${fmtMs(-holder.expiresInMs)} ago (${holder.holderAlive ? 'its replica beats but did not renew it: frozen, or it lost the turn' : 'its replica has no heartbeat'}); ${
          next
            ? `ticket ${next.ticket} (${next.replicaId}) is granted at that replica's next poll`
            : waiting
              ? 'the waiting tickets are past their deadline: the next message gets the turn at once'
              : 'nothing waits: the chat is free, its next message gets the turn at once'
        }`,
        fix: `look at ${h.replicaId} (frozen? botmesh-coord replicas ls --all); nothing to release: the turn is no longer held`,
      })
    }
    if (holder.state === 'ok' && waiting && (heldForMs ?? 0) > turnWaitMs / 2) {
      findings.push({
        code: 'holder-slow',
        severity: 'warning',
        message: `${h.replicaId} has held the turn for ${fmtMs(heldForMs!)} while ${waiting} message(s) wait; waiting messages give up after turnWaitMs (${fmtMs(turnWaitMs)})`,
        fix: `look for a slow handler or a long settleMs on that replica; if its handler hung, hand the turn on: ${release}`,
      })
    }
  }
  const head = c.tickets[0] ?? null
  const headState = tickets[0] ?? null
  // A skip is pinned to the chat's fence too (the ticket number alone cannot tell a new grant).
  const pin = c.fence !== null ? ` --if-fence ${c.fence}` : ''
  if (head && headState && headState !== 'alive') {
    const deadlineInMs = head.deadlineMs - nowMs
    const skipsNow = deadlineInMs <= 0
    findings.push({
      code: headState === 'stale' ? 'head-ticket-stale' : headState === 'dead' ? 'head-ticket-dead' : 'head-ticket-expired',
      severity: skipsNow ? 'warning' : 'problem',
      message: `ticket ${head.ticket} at the head of the queue is dead: ${ticketReason(head, headState, nowMs)}; ${skipsNow ? 'it is skipped at the next acquire or release' : `it blocks the queue for ${fmtMs(deadlineInMs)} more`}`,
      fix: `botmesh-coord chat skip ${key} ${head.ticket}${pin}`,
    })
  }
  const deadBehind = c.tickets.slice(1).filter((_, i) => tickets[i + 1] !== 'alive')
  if (deadBehind.length) {
    findings.push({
      code: 'stale-tickets',
      severity: 'info',
      message: `${deadBehind.length} queued ticket(s) behind the head are dead (${deadBehind.map((t) => t.ticket).join(', ')})${unread ? ` among the first ${c.tickets.length} of ${waiting} (the other ${unread} were not read)` : ''}; they are skipped when they reach the head`,
    })
  }
  if (!h && head && headState === 'alive') {
    const waited = nowMs - head.enqueuedAtMs
    const slow = waited > UNGRANTED_HEAD_MS
    findings.push({
      code: 'queue-without-holder',
      severity: slow ? 'problem' : 'info',
      message: `${waiting} ticket(s) wait and nobody holds the turn; the head ticket ${head.ticket} (${head.replicaId}) has waited ${fmtMs(waited)}${slow ? ': its replica beats but does not take the turn' : ' and is granted at its next poll'}`,
      fix: slow ? `check ${head.replicaId}'s event loop and Redis latency; botmesh-coord chat skip ${key} ${head.ticket}${pin}` : undefined,
    })
  }
  const oldest = c.tickets.reduce<number | null>((m, t) => (m === null || t.enqueuedAtMs < m ? t.enqueuedAtMs : m), null)
  const problems = findings.filter((f) => f.severity === 'problem')
  const warnings = findings.filter((f) => f.severity === 'warning')
  const state: ChatState = problems.length
    ? 'stuck'
    : holder?.state === 'late'
      ? 'late'
      : holder?.state === 'expired'
        ? 'expired'
        : warnings.length
          ? 'attention'
          : !h && !waiting
            ? 'idle'
            : 'ok'
  const reason =
    (problems[0] ?? warnings[0])?.message ??
    (state === 'idle'
      ? `nobody holds the turn and nothing waits${c.lastHolder ? ` (last holder ${c.lastHolder.replicaId})` : ''}`
      : h
        ? `${h.replicaId} holds the turn${waiting ? `, ${waiting} waiting` : ''}`
        : `${waiting} waiting, granted at the next poll`)
  return {
    state,
    reason,
    findings,
    holder,
    heldForMs,
    queueLength: waiting,
    oldestWaitMs: oldest === null ? null : nowMs - oldest,
    tickets,
    next: nextGrant(c, nowMs),
  }
}

/** The findings that make a chat look stuck on a dashboard: problems and warnings, in words. */
export function stuckReasons(health: ChatHealth): string[] {
  return health.findings.filter((f) => f.severity !== 'info').map((f) => f.message)
}

// ---------------------------------------------------------------- leads (providers)

/**
 * A lead: `ok` (a leader renews), `down` (a leader renews but has recorded its transport closed: it
 * yields at `yieldsAt` unless the transport comes back), `late` (the leader is late to renew),
 * `dead`/`stale` (the leader's heartbeat is gone or it restarted, the lease runs on), `expired` (the
 * lease ran out, not yet taken over), `vacant` (nobody leads). A lease problem outranks `down`.
 */
export type LeadState = 'ok' | 'down' | 'late' | 'dead' | 'stale' | 'expired' | 'vacant'

/** The leader's transport while it is down: for how long, how long it yields after, and when (ms from now, ≥ 0). */
export interface TransportDown {
  downForMs: number
  yieldAfterMs: number
  yieldsInMs: number
}

export interface LeadHealth {
  state: LeadState
  reason: string
  leader: LeaseHealth | null
  vacantForMs: number | null
  leadingForMs: number | null
  /** null: the leader's transport is up (or it never said otherwise), or nobody leads. */
  transportDown: TransportDown | null
}

/** `transport down 35s (yields at 1m)`: how long down, and the down time at which the leader yields. */
export function transportDownText(t: TransportDown): string {
  return `transport down ${fmtMs(t.downForMs)} (yields at ${fmtMs(t.yieldAfterMs)})`
}

export function leadHealth(l: LeadSnapshot, live: Liveness, nowMs: number): LeadHealth {
  const h = l.holder
  if (!h) {
    const vacantForMs = l.releasedAtMs ? nowMs - l.releasedAtMs : null
    const standing = l.candidates.filter((c) => c.deadlineMs > nowMs && live.isAlive(c)).length
    return {
      state: 'vacant',
      reason: `nobody leads ${l.key}${vacantForMs === null ? '' : ` (for ${fmtMs(vacantForMs)})`}; ${standing ? `${standing} replica(s) stand for it` : 'no live replica stands for it'}`,
      leader: null,
      vacantForMs,
      leadingForMs: null,
      transportDown: null,
    }
  }
  const leader = leaseHealth(h, live, nowMs, LEAD_WORDS)
  const t = l.transportDown
  const transportDown: TransportDown | null = t
    ? {
        downForMs: ageMs(nowMs, t.sinceMs),
        yieldAfterMs: Math.max(0, t.yieldsAtMs - t.sinceMs),
        yieldsInMs: Math.max(0, t.yieldsAtMs - nowMs),
      }
    : null
  const base = { leader, vacantForMs: null, leadingForMs: h.sinceMs ? nowMs - h.sinceMs : null, transportDown }
  if (transportDown && leader.state === 'ok') {
    return {
      ...base,
      state: 'down',
      reason: `${h.replicaId} leads ${l.key} but its ${transportDownText(transportDown)}: nothing is sent or received on it; ${
        transportDown.yieldsInMs > 0
          ? `it yields in ${fmtMs(transportDown.yieldsInMs)} unless the transport comes back`
          : 'it is yielding now'
      }`,
    }
  }
  return { ...base, state: leader.state, reason: leader.reason }
}
