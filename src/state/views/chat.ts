/**
 * The rows of `chat ls` (and the dashboard's chats), and one chat whole for `chat inspect`: its turn
 * and queue as the health model judges them, with its checkpoint and handover marker.
 */
import type { Holder } from '../../wire/types.js'
import type { ChatDetail, ChatSnapshot, ReplicaSnapshot } from '../decode.js'
import { staleCheckpointWrite, type DeployedFingerprints, type StaleCheckpointWrite } from '../checkpoint-incidents.js'
import { chatHealth, idleChatReason, type ChatFinding, type ChatHealth, type ChatState } from '../health/chat.js'
import type { LeaseState } from '../health/lease.js'
import { ageMs, liveness, type Liveness } from '../health/liveness.js'
import type { TicketState } from '../health/tickets.js'
import { checkpointRow, type CheckpointRow } from './checkpoint.js'
import { handoverView, type HandoverView } from './handover.js'
import { byNum, byText, flat } from './shared.js'

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

/** The row of a chat that has no turn state (only a checkpoint or a handover marker, or nothing): idle. */
function idleChatRow(key: string): ChatRow {
  return {
    kind: 'chat',
    key,
    state: 'idle',
    reason: idleChatReason(null),
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
}

/** The holder of a chat's turn as `chat inspect` shows it, with its lease as the health model judged it. */
function holderView(c: ChatSnapshot, live: Liveness, now: number, health: ChatHealth): ChatView['holder'] {
  const h = c.holder
  if (!h) return null
  return {
    replicaId: h.replicaId,
    incarnation: h.incarnation,
    ticket: h.ticket,
    alive: live.isAlive(h),
    status: live.status(h),
    heldForMs: h.grantedAtMs ? ageMs(now, h.grantedAtMs) : null,
    lastRenewalAgoMs: health.holder!.lastRenewalAgoMs,
    renewMs: health.holder!.renewMs,
    renewalOverdueMs: health.holder!.renewalOverdueMs,
    waitedMs: h.waitedMs,
    offered: h.offered,
  }
}

/** The queued tickets read, each with the state the health model gave it. */
function ticketRows(c: ChatSnapshot, now: number, health: ChatHealth): TicketRow[] {
  return c.tickets.map((t, i) => {
    const state = health.tickets[i]!
    return {
      ticket: t.ticket,
      replicaId: t.replicaId,
      incarnation: t.incarnation,
      state,
      alive: state === 'alive',
      waitedMs: now - t.enqueuedAtMs,
      deadlineInMs: t.deadlineMs - now,
    }
  })
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
  const health = c ? chatHealth(c, live, now, opts) : null
  const row: ChatRow = c && health ? chatRow(c, live, now, health) : idleChatRow(key)
  return {
    ...row,
    key,
    exists: Boolean(c || d.checkpoint || d.handover),
    holder: c && health ? holderView(c, live, now, health) : null,
    previousHolder: c?.previousHolder ?? null,
    lastHolder: c?.lastHolder ?? null,
    lastTicket: c?.lastTicket ?? 0,
    skippedTickets: c?.skippedTickets ?? 0,
    tickets: c && health ? ticketRows(c, now, health) : [],
    nextTicket: health?.next?.ticket ?? null,
    findings: health?.findings ?? [],
    checkpoint: d.checkpoint ? checkpointRow(d.checkpoint, now, replicas, d.checkpointTtlMs, opts.deployed) : null,
    staleWrite: d.checkpoint ? staleCheckpointWrite(c ?? null, d.checkpoint) : null,
    handover: d.handover ? handoverView(d.handover, now, replicas, d.handoverTtlMs) : null,
  }
}
