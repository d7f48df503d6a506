/**
 * The dashboard's pure model: one DashboardSnapshot (plus the model built from the previous one)
 * becomes the rows the panels print. No I/O, no React: unit-tested on decoded state.
 *
 * What needs history lives here too: turns per second (from successive heartbeat counters), the
 * dashboard's own Redis load (commands per second), and replicas that vanished between refreshes
 * (kept on screen as "gone" for a while, so a dead replica stands out instead of silently leaving).
 */
import { chatView, explainChat, leadHealth, liveness, replicaHealth, transportDownText, type Liveness } from '../lib.js'
import type {
  ChatDetail,
  ChatState,
  ChatView,
  DashboardSnapshot,
  Explanation,
  LeadSnapshot,
  LeadState,
  LetGo,
  ReplicaSnapshot,
} from '../lib.js'
import { dur, ratePerSec } from './text.js'
import { eventLine, streamIdMs, type EventLine, type Tone } from '../output/events.js'

/** How long a replica that disappeared stays on the dashboard as "gone" (its record is kept longer: GONE_KEEP_MS in src/state/health.ts). */
export const GONE_SHOWN_MS = 30_000
/** A replica whose oldest waiting message has waited this long needs attention (as alert BotmeshTurnBacklog). */
export const BACKLOG_WAIT_MS = 60_000

export type ReplicaStatus = 'ok' | 'late' | 'gone'

export interface ReplicaRow {
  replicaId: string
  incarnation: string
  status: ReplicaStatus
  /** Redis now minus its last beat. For a gone replica: since its last beat we saw. */
  heartbeatAgeMs: number
  leaseMs: number
  /** heartbeatAgeMs / leaseMs: 1 means its leases are expiring now. */
  beatFraction: number
  leasesHeld: number
  turnsPerSec: number | null
  waitingNow: number
  /** How long its longest-waiting message had waited at its last beat (null: none waited, or an older replica). */
  oldestWaitMs: number | null
  waitP99Ms: number | null
  leasesLost: number
  /** How long ago it vanished from the replica index (gone rows only). */
  goneForMs: number | null
  host: string
  pid: number
}

export interface ProviderRow {
  key: string
  /** The health model's state of the lead: a late leader stands out. */
  state: LeadState
  leader: string | null
  leaderIncarnation: string | null
  fence: number | null
  /** How long the current leader has led. */
  leadingForMs: number | null
  standbys: string[]
  /** "a → b, 25s left" / "a, 25s left" or null. */
  pendingYield: string | null
  /** How long ago the current leader took over from another one, how long the gap was, and how the one before let go. */
  lastHandover: { agoMs: number; tookMs: number | null; how: LetGo | null } | null
  /** Nobody leads since (ms ago). */
  leaderlessForMs: number | null
  expiresInMs: number | null
  /** The leader's transport: null while up, or `transport down 35s (yields at 1m)`. */
  transportDown: string | null
}

export interface ChatRow {
  key: string
  /** The health model's state of the chat: a late holder stands out. */
  state: ChatState
  holder: string | null
  /** The holder is late to renew its turn: frozen or partitioned. */
  holderLate: boolean
  holderIncarnation: string | null
  fence: number | null
  queueLength: number
  oldestWaitMs: number | null
  leaseLeftMs: number | null
  /** "flow/step", with a "~" mark for ephemeral (forward) checkpoints. */
  checkpoint: string | null
  stuck: string[]
  /** Replicas holding or waiting (the filter matches them). */
  replicas: string[]
}

export interface ExpiringRow {
  kind: 'chat' | 'lead'
  key: string
  replicaId: string
  fence: number
  expiresInMs: number
  /** Its holder is late to renew it (the health model's 'late'): frozen or partitioned. */
  late: boolean
}

export type { Tone }
export type EventRow = EventLine
export { streamIdMs }

interface TurnSample {
  incarnation: string
  turnsGranted: number
  beatAtMs: number
  rate: number | null
}

export interface DashboardModel {
  nowMs: number
  /** Local monotonic ms when the snapshot arrived. */
  sampledAtMs: number
  replicas: ReplicaRow[]
  providers: ProviderRow[]
  chats: ChatRow[]
  expiring: ExpiringRow[]
  events: EventRow[]
  corrupt: DashboardSnapshot['corrupt']
  /** The live replicas as read (liveness for the detail view). */
  liveReplicas: ReplicaSnapshot[]
  /** Commands the last refresh sent. */
  refreshCommands: number
  /** Every Redis command the dashboard sent, per second, since the previous refresh. */
  commandsPerSec: number | null
  commandsTotal: number
  /** Replicas that vanished, by id, and when we last saw them. */
  gone: Map<string, { row: ReplicaRow; goneAtMs: number }>
  turnSamples: Map<string, TurnSample>
}

export interface AdvanceInput {
  /** Local monotonic ms (performance.now()) when the snapshot arrived. */
  sampledAtMs: number
  /** Every Redis command this dashboard sent so far (reads, detail views, interventions). */
  commandsTotal: number
}

/** Build the model of `snap`, using what the previous model remembered. */
export function advance(prev: DashboardModel | null, snap: DashboardSnapshot, input: AdvanceInput): DashboardModel {
  const now = snap.nowMs
  const turnSamples = new Map<string, TurnSample>()
  const beating = liveness(snap.replicas, now)
  const live: ReplicaRow[] = snap.replicas.map((r) => {
    const leaseMs = r.info.leaseMs || 15_000
    const age = Math.max(0, now - r.beatAtMs)
    const before = prev?.turnSamples.get(r.replicaId)
    let rate: number | null = null
    if (before && before.incarnation === r.incarnation) {
      // Counters move only with a heartbeat: a rate between two beats, kept until the next one.
      rate =
        r.beatAtMs > before.beatAtMs ? ratePerSec(r.stats.turnsGranted, before.turnsGranted, r.beatAtMs - before.beatAtMs) : before.rate
    }
    turnSamples.set(r.replicaId, { incarnation: r.incarnation, turnsGranted: r.stats.turnsGranted, beatAtMs: r.beatAtMs, rate })
    return {
      replicaId: r.replicaId,
      incarnation: r.incarnation,
      status: replicaHealth(r, now).state === 'late' ? 'late' : 'ok',
      heartbeatAgeMs: age,
      leaseMs,
      beatFraction: age / leaseMs,
      leasesHeld: r.stats.turnsHeld + r.stats.leadsHeld, // as `replicas ls`
      turnsPerSec: rate,
      waitingNow: r.stats.waitingNow,
      oldestWaitMs: r.stats.oldestWaitMs ?? null,
      waitP99Ms: r.stats.waitP99Ms,
      leasesLost: r.stats.leasesLost,
      goneForMs: null,
      host: r.info.host,
      pid: r.info.pid,
    }
  })

  const liveIds = new Set(live.map((r) => r.replicaId))
  const gone = new Map<string, { row: ReplicaRow; goneAtMs: number }>()
  for (const [id, g] of prev?.gone ?? []) if (!liveIds.has(id) && now - g.goneAtMs < GONE_SHOWN_MS) gone.set(id, g)
  for (const r of prev?.replicas ?? []) {
    if (r.status !== 'gone' && !liveIds.has(r.replicaId) && !gone.has(r.replicaId)) gone.set(r.replicaId, { row: r, goneAtMs: now })
  }
  const goneRows: ReplicaRow[] = [...gone.values()].map(({ row, goneAtMs }) => {
    const lastBeat = (prev?.nowMs ?? now) - row.heartbeatAgeMs
    const age = now - Math.min(lastBeat, goneAtMs)
    return { ...row, status: 'gone', heartbeatAgeMs: age, beatFraction: age / row.leaseMs, turnsPerSec: null, goneForMs: now - goneAtMs }
  })
  // Live first, by id (as `replicas ls`), then the gone ones, most recently gone first.
  const replicas = [...live, ...goneRows.sort((a, b) => (a.goneForMs ?? 0) - (b.goneForMs ?? 0))]

  const elapsed = prev ? input.sampledAtMs - prev.sampledAtMs : 0
  return {
    nowMs: now,
    sampledAtMs: input.sampledAtMs,
    replicas,
    providers: snap.providers.map((p) => providerRow(p, beating, now)),
    chats: snap.chats.map((c) => ({
      key: c.chat.key,
      state: c.health.state,
      holderLate: c.health.holder?.state === 'late',
      holder: c.chat.holder?.replicaId ?? null,
      holderIncarnation: c.chat.holder?.incarnation ?? null,
      fence: c.chat.fence,
      queueLength: c.queueLength,
      oldestWaitMs: c.oldestWaitMs,
      leaseLeftMs: c.chat.holder ? c.chat.holder.expiresAtMs - now : null,
      checkpoint: c.checkpoint ? `${c.checkpoint.ephemeral ? '~' : ''}${c.checkpoint.flow}/${c.checkpoint.step}` : null,
      stuck: c.stuck,
      replicas: [...new Set([...(c.chat.holder ? [c.chat.holder.replicaId] : []), ...c.chat.tickets.map((t) => t.replicaId)])],
    })),
    expiring: snap.expiring.map(({ state, ...e }) => ({ ...e, late: state === 'late' })),
    events: snap.events.map((e) => eventRow(e.id, e.event)).reverse(),
    corrupt: snap.corrupt,
    liveReplicas: snap.replicas,
    refreshCommands: snap.commands,
    commandsPerSec: prev ? ratePerSec(input.commandsTotal, prev.commandsTotal, elapsed) : null,
    commandsTotal: input.commandsTotal,
    gone,
    turnSamples,
  }
}

function providerRow(p: LeadSnapshot, live: Liveness, now: number): ProviderRow {
  const leader = p.holder
  const y = p.yieldRequest
  const yLeft = y ? y.expiresAtMs - now : 0
  const health = leadHealth(p, live, now)
  return {
    key: p.key,
    state: health.state,
    transportDown: health.transportDown ? transportDownText(health.transportDown) : null,
    leader: leader?.replicaId ?? null,
    leaderIncarnation: leader?.incarnation ?? null,
    fence: p.fence,
    leadingForMs: leader ? Math.max(0, now - leader.sinceMs) : null,
    standbys: p.candidates.filter((c) => c.incarnation !== leader?.incarnation).map((c) => c.replicaId),
    pendingYield: y && yLeft > 0 ? `${y.target ? `to ${y.target}` : 'any standby'}, by ${y.by}, ${dur(yLeft)} left` : null,
    lastHandover:
      leader && p.previousHolder ? { agoMs: Math.max(0, now - leader.sinceMs), tookMs: p.lastHandoverMs, how: p.lastHandoverHow } : null,
    leaderlessForMs: !leader && p.releasedAtMs ? Math.max(0, now - p.releasedAtMs) : null,
    expiresInMs: leader ? leader.expiresAtMs - now : null,
  }
}

/**
 * What needs an operator's attention on this screen, in words (empty: all healthy): replicas late or
 * gone, live replicas with a message waiting over BACKLOG_WAIT_MS, leads not `ok` (vacant, a late
 * leader, a transport down), stuck or late chats, leases late or past expiry, corrupt keys. The
 * header says "all healthy" only when this is empty.
 */
export function needsAttention(m: DashboardModel): string[] {
  const out: string[] = []
  const n = (count: number, what: string) => (count ? [`${count} ${what}`] : [])
  out.push(...n(m.replicas.filter((r) => r.status !== 'ok').length, 'replica(s) late or gone'))
  out.push(
    ...n(
      m.replicas.filter((r) => r.status !== 'gone' && (r.oldestWaitMs ?? 0) >= BACKLOG_WAIT_MS).length,
      `replica(s) with a message waiting over ${dur(BACKLOG_WAIT_MS)}`,
    ),
  )
  out.push(...n(m.providers.filter((p) => p.state !== 'ok').length, 'lead(s) not ok'))
  out.push(...n(m.chats.filter((c) => c.stuck.length > 0 || c.holderLate).length, 'chat(s) stuck'))
  out.push(...n(m.expiring.filter((e) => e.late || e.expiresInMs < 0).length, 'lease(s) late'))
  out.push(...n(m.corrupt.length, 'corrupt key(s)'))
  return out
}

/** The chat rows that match a filter: a substring of the key or of a replica holding/waiting. */
export function filterChats(rows: ChatRow[], filter: string): ChatRow[] {
  const f = filter.trim().toLowerCase()
  if (!f) return rows
  return rows.filter((r) => r.key.toLowerCase().includes(f) || r.replicas.some((id) => id.toLowerCase().includes(f)))
}

export function filterExpiring(rows: ExpiringRow[], filter: string): ExpiringRow[] {
  const f = filter.trim().toLowerCase()
  if (!f) return rows
  return rows.filter((r) => r.key.toLowerCase().includes(f) || r.replicaId.toLowerCase().includes(f))
}

/** One line per event: the CLI's `events` and this panel say the same (commands/output/events.ts). */
export function eventRow(id: string, e: Record<string, unknown>): EventRow {
  return eventLine(id, e)
}

// ------------------------------------------------------------------ detail view

/**
 * The detail view shows what `chat inspect --explain` prints: the read side's shared view of the
 * chat and its verdict (src/state/views.ts), with liveness from the replicas of the last refresh.
 */
export function chatDetail(key: string, d: ChatDetail, replicas: ReplicaSnapshot[]): { view: ChatView; explanation: Explanation } {
  const view = chatView(d, replicas, key)
  return { view, explanation: explainChat(view) }
}
