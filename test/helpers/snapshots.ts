/**
 * One builder of decoded state for the view, model and dashboard tests: the snapshots src/state/
 * decodes from Redis (ReplicaSnapshot, ChatSnapshot, LeadSnapshot, FlowCheckpoint, HandoverMarker, ChatDetail) and readDashboard
 * assembles from them (DashboardChat, DashboardSnapshot). Times are on a fixed Redis clock (NOW);
 * every builder takes overrides of any field. Live state made by real replicas is
 * test/cli/read-fixture.ts.
 */
import type {
  ChatDetail,
  ChatSnapshot,
  DashboardChat,
  DashboardSnapshot,
  FlowCheckpoint,
  HandoverMarker,
  LeadSnapshot,
  ReplicaSnapshot,
  TicketSnapshot,
} from '../../src/index.js'
import { chatHealth, liveness, stuckReasons } from '../../src/index.js'

/** Redis's clock in every snapshot built here. */
export const NOW = 1_800_000_000_000
/** A chat's fence unless given one. */
export const FENCE = 1_700_000_000_000_042
/** A lead's fence unless given one. */
export const LEAD_FENCE = 1_700_000_000_000_001

/** The incarnation of a replica unless given one (its short form on screen: `pod-a-in`). */
export const incarnationOf = (replicaId: string) => `${replicaId}-inc-0123456789`

/** A live replica that beat `beatAgo` ms ago (default 1 s) with a 15 s lease. */
export function replica(
  replicaId: string,
  o: Partial<Omit<ReplicaSnapshot, 'stats'>> & { stats?: Partial<ReplicaSnapshot['stats']>; turnsGranted?: number; beatAgo?: number } = {},
): ReplicaSnapshot {
  const { turnsGranted, beatAgo, stats, ...rest } = o
  const beatAtMs = o.beatAtMs ?? NOW - (beatAgo ?? 1000)
  return {
    replicaId,
    incarnation: incarnationOf(replicaId),
    info: { host: `h-${replicaId}`, pid: 10, version: '0.1.0', startedAt: NOW - 60_000, leaseMs: 15_000 },
    leases: { held: [], waiting: [], more: 0 },
    beatAtMs,
    expiresAtMs: beatAtMs + 15_000,
    clockSkewMs: 3,
    evictedIncarnation: null,
    ...rest,
    stats: { turnsGranted: turnsGranted ?? 0, waitingNow: 0, waitP99Ms: null, leasesLost: 0, leadsHeld: 0, turnsHeld: 0, ...stats },
  }
}

/** A chat's holder: granted `heldForMs` ago (5 s), renewed 1 s ago, its lease ends in `expiresInMs` (10 s). */
export function holder(
  replicaId: string,
  o: Partial<NonNullable<ChatSnapshot['holder']>> & { expiresInMs?: number; heldForMs?: number } = {},
): NonNullable<ChatSnapshot['holder']> {
  const { expiresInMs, heldForMs, ...rest } = o
  return {
    replicaId,
    incarnation: incarnationOf(replicaId),
    ticket: 1,
    expiresAtMs: NOW + (expiresInMs ?? 10_000),
    grantedAtMs: NOW - (heldForMs ?? 5000),
    lastRenewalMs: NOW - 1000,
    waitedMs: 12,
    ...rest,
    offered: rest.offered ?? false,
  }
}

/** A queued ticket, enqueued `waitedMs` ago (2 s), live for `deadlineInMs` more (10 s; negative: dead). */
export function ticket(
  n: number,
  replicaId: string,
  o: Partial<TicketSnapshot> & { deadlineInMs?: number; waitedMs?: number } = {},
): TicketSnapshot {
  const { deadlineInMs, waitedMs, ...rest } = o
  return {
    ticket: n,
    replicaId,
    incarnation: incarnationOf(replicaId),
    deadlineMs: NOW + (deadlineInMs ?? 10_000),
    enqueuedAtMs: NOW - (waitedMs ?? 2000),
    ...rest,
  }
}

/** A chat's state hash, decoded: idle unless given a holder or tickets. */
export function chatState(key: string, o: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return {
    key,
    fence: FENCE,
    holder: null,
    previousHolder: null,
    lastHolder: null,
    lastTicket: Math.max(o.holder?.ticket ?? 0, ...(o.tickets ?? []).map((t) => t.ticket)),
    skippedTickets: 0,
    tickets: [],
    queued: o.tickets?.length ?? 0,
    ...o,
  }
}

/** A lead held by `by` (a replica id, with a lease ending in 9 s, or a whole holder), or free (null). */
export function lead(key: string, by: string | LeadSnapshot['holder'], o: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return {
    key,
    fence: LEAD_FENCE,
    holder:
      typeof by === 'string'
        ? { replicaId: by, incarnation: incarnationOf(by), expiresAtMs: NOW + 9000, sinceMs: NOW - 60_000, lastRenewalMs: NOW - 1000 }
        : by,
    transportDown: null,
    previousHolder: null,
    lastHolder: null,
    releasedAtMs: null,
    lastHandoverMs: null,
    lastHandoverHow: null,
    lastHandoverBy: null,
    letGoHow: null,
    letGoBy: null,
    yieldRequest: null,
    candidates: [],
    candidateCount: o.candidates?.length ?? 0,
    ...o,
  }
}

/** One chat read whole (`chat inspect`): its state and nothing else unless given. */
export function chatDetail(chat: ChatSnapshot | null, o: Partial<ChatDetail> = {}): ChatDetail {
  return { chat, checkpoint: null, checkpointTtlMs: null, handover: null, handoverTtlMs: null, nowMs: NOW, ...o }
}

/** A dashboard row: the chat held by `by` (renewed 1 s ago, 8 s left, held 3 s) with `waiting` queued behind. */
export function dashboardChat(key: string, by: string | null, waiting: string[] = [], o: Partial<DashboardChat> = {}): DashboardChat {
  const chat =
    o.chat ??
    chatState(key, {
      holder: by ? holder(by, { expiresInMs: 8000, heldForMs: 3000, waitedMs: 5 }) : null,
      lastTicket: 1 + waiting.length,
      tickets: waiting.map((id, i) => ticket(2 + i, id)),
    })
  // Every replica the chat names beats (a test that wants a dead one passes its own `health`).
  const live = [...new Set([...(chat.holder ? [chat.holder.replicaId] : []), ...chat.tickets.map((t) => t.replicaId)])].map((id) =>
    replica(id),
  )
  const health = chatHealth(chat, liveness(live, NOW), NOW)
  return {
    chat,
    checkpoint: null,
    health,
    stuck: stuckReasons(health),
    queueLength: waiting.length,
    oldestWaitMs: waiting.length ? 2000 : null,
    ...o,
  }
}

/** One dashboard refresh: pod-a and pod-b live, pod-a leading provider:wa (pod-b standing), chat:42 held by pod-a, pod-b waiting. */
export function dashboard(o: Partial<DashboardSnapshot> = {}): DashboardSnapshot {
  return {
    nowMs: NOW,
    replicas: [replica('pod-a'), replica('pod-b')],
    providers: [
      lead('provider:wa', 'pod-a', { candidates: [{ replicaId: 'pod-b', incarnation: incarnationOf('pod-b'), deadlineMs: NOW + 5000 }] }),
    ],
    chats: [dashboardChat('chat:42', 'pod-a', ['pod-b'])],
    expiring: [
      { kind: 'chat', key: 'chat:42', replicaId: 'pod-a', fence: FENCE, expiresInMs: 8000, state: 'ok' },
      { kind: 'lead', key: 'provider:wa', replicaId: 'pod-a', fence: LEAD_FENCE, expiresInMs: 9000, state: 'ok' },
    ],
    events: [
      {
        id: `${NOW - 5000}-0`,
        event: { type: 'leader', replicaId: 'pod-a', name: 'provider:wa', fence: LEAD_FENCE, previous: null },
      },
    ],
    commands: 9,
    corrupt: [],
    ...o,
  }
}

/** An ephemeral (forward) checkpoint of flow `order`, written 5 s ago by `by`'s turn (fingerprint f1a2b3, 10 m TTL). */
export function checkpoint(key: string, by = 'pod-a', o: Partial<FlowCheckpoint> = {}): FlowCheckpoint {
  return {
    key,
    flow: 'order',
    step: 'address',
    state: {},
    revision: 1_700_000_000_000_777,
    owner: { replicaId: by, incarnation: incarnationOf(by), fence: FENCE },
    updatedAt: NOW - 5000,
    ephemeral: { ttlMs: 600_000, fingerprint: 'f1a2b3' },
    answer: null,
    answerBytes: 0,
    ...o,
  }
}

/** A handover marker of the async conversation `survey`, left by `by` 20 s ago. */
export function handoverMarker(key: string, by = 'pod-c', o: Partial<HandoverMarker> = {}): HandoverMarker {
  return {
    key,
    name: 'survey',
    replicaId: by,
    incarnation: incarnationOf(by),
    fence: null,
    since: NOW - 20_000,
    updatedAt: NOW - 20_000,
    data: null,
    ...o,
  }
}

/** What the dashboard's chat view reads for `key` of a refresh. */
export function chatDetailOf(snap: DashboardSnapshot, key: string): ChatDetail {
  return chatDetail(snap.chats.find((x) => x.chat.key === key)?.chat ?? null, { nowMs: snap.nowMs })
}
