/**
 * How a chat's turn is doing, and why: the findings about its holder and its queue, and the one
 * verdict rule (chatVerdict) that turns findings into a state — the chat health here and the
 * diagnosis of `chat inspect --explain` (../views/explain.ts) both apply it.
 */
import type { Holder } from '../../wire/types.js'
import type { ChatSnapshot, TicketSnapshot } from '../decode.js'
import { DEFAULTS } from '../../defaults.js'
import { REPLICAS_ALL_COMMAND, chatSkipCommand, pinnedRevoke } from '../suggested-commands.js'
import { TURN_WORDS, leaseHealth, type LeaseHealth, type LeaseState } from './lease.js'
import { ageMs, fmtMs, type Liveness } from './liveness.js'
import { nextGrant, ticketReason, ticketState, type TicketState } from './tickets.js'

/** A queue whose live head has waited this long without the turn being granted is stuck. */
export const UNGRANTED_HEAD_MS = 5_000

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

/** A chat's state, and the finding that decided it: the first problem, else the first warning (null: neither). */
export interface ChatVerdict<F> {
  state: ChatState
  finding: F | null
}

/**
 * The one rule for "is this chat stuck, and who is at fault", so the chat health and the diagnosis
 * cannot disagree: chatHealth applies it to its findings about the turn and the queue, explainChat to
 * those plus what the checkpoint and the handover marker add. A problem makes the chat stuck; a
 * holder late to renew, or whose lease ran out, outranks a warning (nothing is blocked yet, but it
 * will be); then a warning asks for attention; nobody holding and nothing waiting is idle.
 * `holder`: the state of the holder's lease (null: nobody holds the turn); `queueLength`: how many wait.
 */
export function chatVerdict<F extends { severity: Severity }>(
  findings: readonly F[],
  turn: { holder: LeaseState | null; queueLength: number },
): ChatVerdict<F> {
  const finding = findings.find((f) => f.severity === 'problem') ?? findings.find((f) => f.severity === 'warning') ?? null
  const state: ChatState =
    finding?.severity === 'problem'
      ? 'stuck'
      : turn.holder === 'late'
        ? 'late'
        : turn.holder === 'expired'
          ? 'expired'
          : finding
            ? 'attention'
            : turn.holder === null && turn.queueLength === 0
              ? 'idle'
              : 'ok'
  return { state, finding }
}

/** Why an idle chat is idle: `chat ls --all`, and `chat inspect` of a chat with no turn state at all (no last holder). */
export function idleChatReason(lastHolder: Holder | null): string {
  return `nobody holds the turn and nothing waits${lastHolder ? ` (last holder ${lastHolder.replicaId})` : ''}`
}

/** What the findings about a chat are judged on, measured once. */
interface ChatFacts {
  c: ChatSnapshot
  nowMs: number
  /** The queue's length; its tickets may be only the head of it (a bounded read: the rest is not judged here). */
  waiting: number
  heldForMs: number | null
  turnWaitMs: number
}

export function chatHealth(c: ChatSnapshot, live: Liveness, nowMs: number, opts: { turnWaitMs?: number } = {}): ChatHealth {
  const h = c.holder
  const holder = h ? leaseHealth(h, live, nowMs, TURN_WORDS) : null
  const tickets = c.tickets.map((t) => ticketState(t, live, nowMs))
  const waiting = Math.max(c.queued ?? 0, c.tickets.length)
  const heldForMs = h?.grantedAtMs ? ageMs(nowMs, h.grantedAtMs) : null
  const facts: ChatFacts = { c, nowMs, waiting, heldForMs, turnWaitMs: opts.turnWaitMs ?? DEFAULTS.turnWaitMs }
  const findings = [...(holder ? holderFindings(facts, holder) : []), ...queueFindings(facts, tickets)]
  const oldest = c.tickets.reduce<number | null>((m, t) => (m === null || t.enqueuedAtMs < m ? t.enqueuedAtMs : m), null)
  const verdict = chatVerdict(findings, { holder: holder?.state ?? null, queueLength: waiting })
  const reason =
    verdict.finding?.message ??
    (verdict.state === 'idle'
      ? idleChatReason(c.lastHolder)
      : h
        ? `${h.replicaId} holds the turn${waiting ? `, ${waiting} waiting` : ''}`
        : `${waiting} waiting, granted at the next poll`)
  return {
    state: verdict.state,
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

/** What is wrong with the turn's holder: dead or restarted, late to renew, expired, or slow with messages waiting. */
function holderFindings({ c, nowMs, waiting, heldForMs, turnWaitMs }: ChatFacts, holder: LeaseHealth): ChatFinding[] {
  const h = c.holder!
  const findings: ChatFinding[] = []
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
      fix: `look at ${h.replicaId} (frozen? ${REPLICAS_ALL_COMMAND}); nothing to release: the turn is no longer held`,
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
  return findings
}

/** What is wrong with the queue: a dead ticket at its head, dead ones behind it, a live head nobody grants. */
function queueFindings({ c, nowMs, waiting }: ChatFacts, tickets: TicketState[]): ChatFinding[] {
  const findings: ChatFinding[] = []
  const head = c.tickets[0] ?? null
  const headState = tickets[0] ?? null
  if (head && headState && headState !== 'alive') {
    const deadlineInMs = head.deadlineMs - nowMs
    const skipsNow = deadlineInMs <= 0
    findings.push({
      code: headState === 'stale' ? 'head-ticket-stale' : headState === 'dead' ? 'head-ticket-dead' : 'head-ticket-expired',
      severity: skipsNow ? 'warning' : 'problem',
      message: `ticket ${head.ticket} at the head of the queue is dead: ${ticketReason(head, headState, nowMs)}; ${skipsNow ? 'it is skipped at the next acquire or release' : `it blocks the queue for ${fmtMs(deadlineInMs)} more`}`,
      fix: chatSkipCommand(c.key, head.ticket, c.fence),
    })
  }
  const unread = waiting - c.tickets.length
  const deadBehind = c.tickets.slice(1).filter((_, i) => tickets[i + 1] !== 'alive')
  if (deadBehind.length) {
    findings.push({
      code: 'stale-tickets',
      severity: 'info',
      message: `${deadBehind.length} queued ticket(s) behind the head are dead (${deadBehind.map((t) => t.ticket).join(', ')})${unread ? ` among the first ${c.tickets.length} of ${waiting} (the other ${unread} were not read)` : ''}; they are skipped when they reach the head`,
    })
  }
  if (!c.holder && head && headState === 'alive') {
    const waited = nowMs - head.enqueuedAtMs
    const slow = waited > UNGRANTED_HEAD_MS
    findings.push({
      code: 'queue-without-holder',
      severity: slow ? 'problem' : 'info',
      message: `${waiting} ticket(s) wait and nobody holds the turn; the head ticket ${head.ticket} (${head.replicaId}) has waited ${fmtMs(waited)}${slow ? ': its replica beats but does not take the turn' : ' and is granted at its next poll'}`,
      fix: slow ? `check ${head.replicaId}'s event loop and Redis latency; ${chatSkipCommand(c.key, head.ticket, c.fence)}` : undefined,
    })
  }
  return findings
}

/** The findings that make a chat look stuck on a dashboard: problems and warnings, in words. */
export function stuckReasons(health: ChatHealth): string[] {
  return health.findings.filter((f) => f.severity !== 'info').map((f) => f.message)
}
