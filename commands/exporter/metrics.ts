/**
 * The exporter's metrics: one prom-client registry, every metric declared once here (name, unit in
 * the name, help, bounded labels — never a chat key), and how one bounded read of the shared state
 * sets them. What is ok, late, stuck or vacant is decided by the health model (src/state/health.ts),
 * as in every other view. The README's metric list is generated from this registry.
 */
import { Counter, Gauge, Registry } from 'prom-client'
import { CHAT_REASONS, chatHealth, leadHealth, leadKind, liveness, replicaHealth, type DashboardSnapshot, type LeaseState } from '../lib.js'

/** Leads reported one by one (per lead name) at most; the rest are summed in the other metrics only. */
export const MAX_LEADS = 100
/** Replicas reported one by one (per replicaId, in id order) at most; the rest are summed in the other metrics only. */
export const MAX_REPLICAS = 100

const LEASE_STATES: LeaseState[] = ['ok', 'late', 'expired', 'dead', 'stale']
const HANDOVER_OUTCOMES = new Set(['resumed', 'notify', 'restart', 'custom', 'drop', 'changed'])

export type ExporterMetrics = ReturnType<typeof exporterMetrics>

export function exporterMetrics() {
  const registry = new Registry()
  const registers = [registry]
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers })
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers })
  const m = {
    registry,
    // ---- the state, from one bounded read per scrape
    replicas: gauge('botmesh_replicas', 'Replicas with a live heartbeat record, by state (ok, late: its heartbeat is overdue)', ['state']),
    leases: gauge(
      'botmesh_leases',
      'Leases held (chat turns and leads), by kind (chat, provider, scheduler, lead) and state (ok, late, expired, dead, stale)',
      ['kind', 'state'],
    ),
    leasesUnread: gauge(
      'botmesh_leases_unread',
      "Chat turns held by live replicas that the scrape did not read one by one (past its bounded read): counted in botmesh_leases from their holder's heartbeat, in its state",
    ),
    renewalOverdueMax: gauge(
      'botmesh_lease_renewal_overdue_max_seconds',
      "The largest renewal overdue of any held lease: time since its last renewal past its holder's renewal interval",
    ),
    heartbeatOverdueMax: gauge(
      'botmesh_replica_heartbeat_overdue_max_seconds',
      'The largest heartbeat overdue of any replica: time since its last beat past its renewal interval',
    ),
    turnsWaiting: gauge('botmesh_turns_waiting', 'Messages waiting for a chat turn now, summed over the replicas (their heartbeats)'),
    // ---- each live replica's own counts, as its last heartbeat (every leaseMs / 3) carried them
    replicaWaiting: gauge('botmesh_heartbeat_waiting_turns', 'Messages of this replica waiting for a chat turn, at its last heartbeat', [
      'replica',
    ]),
    replicaOldestWait: gauge(
      'botmesh_heartbeat_oldest_wait_seconds',
      'How long the longest-waiting message of this replica had waited for its chat turn, at its last heartbeat (0: none waited)',
      ['replica'],
    ),
    // Running totals of the replica process, set from its heartbeat each scrape: they start again at
    // 0 when it restarts (a counter reset to Prometheus) and vanish while a scrape fails.
    replicaTurnsGranted: counter('botmesh_heartbeat_turns_granted_total', 'Chat turns granted to this replica since it started', [
      'replica',
    ]),
    replicaTurnsShed: counter(
      'botmesh_heartbeat_turns_shed_total',
      "Messages this replica refused at once since it started (CoordinationUnavailableError 'overloaded': maxWaiting messages were waiting already)",
      ['replica'],
    ),
    chatsWaiting: gauge('botmesh_chats_waiting', 'Chats with at least one queued ticket'),
    queueLongest: gauge('botmesh_chat_queue_longest', 'The longest queue of tickets of any chat'),
    oldestWait: gauge('botmesh_chat_oldest_wait_seconds', 'How long the oldest queued ticket of any chat has waited'),
    chatsStuck: gauge('botmesh_chats_stuck', 'Chats stuck now, by the reason that blocks them (chat inspect <key> --explain)', ['reason']),
    checkpoints: gauge(
      'botmesh_checkpoints',
      'Checkpoints under the prefix (persistent and ephemeral), as of the last complete inventory pass',
    ),
    handoverMarkers: gauge(
      'botmesh_handover_markers',
      'Handover markers of waiting async conversations, as of the last complete inventory pass',
    ),
    replicasGone: gauge(
      'botmesh_replicas_gone',
      'Replicas lost lately: heartbeat records past their expiry (frozen, cut off or killed without an orderly stop; kept 5 minutes past their last beat), as of the last complete inventory pass',
    ),
    inventoryAge: gauge(
      'botmesh_inventory_age_seconds',
      'Since the last inventory pass (a few bounded SCAN batches per scrape, over every master) completed',
    ),
    leaderPresent: gauge('botmesh_lead_leader_present', 'Someone leads this lead (provider:…, scheduler:…, any lead name)', [
      'lead',
      'kind',
    ]),
    leaderLate: gauge('botmesh_lead_leader_late', 'The leader of this lead is late to renew it: frozen or partitioned', ['lead', 'kind']),
    transportDown: gauge(
      'botmesh_lead_transport_down_seconds',
      "How long the leader of this lead has reported its transport down (0 while up or nobody leads); it yields at the campaign's providerDownMs",
      ['lead', 'kind'],
    ),
    vacant: gauge('botmesh_lead_vacant_seconds', 'How long nobody has led this lead (0 while someone leads)', ['lead', 'kind']),
    fence: gauge('botmesh_lead_fence', 'The fence of the current or last grant of this lead', ['lead', 'kind']),
    yieldPending: gauge('botmesh_lead_yield_pending', 'An operator asked the leader of this lead to step down and it has not yet', [
      'lead',
      'kind',
    ]),
    corruptRecords: gauge(
      'botmesh_corrupt_records',
      'Records the last scrape read but could not decode (a heartbeat, chat or lead written by hand or by another tool): doctor names each',
    ),
    schemaCompatible: gauge('botmesh_schema_compatible', 'The key schema under this prefix is one this release understands (0: upgrade)'),
    // ---- counters from the event stream (entries after the exporter started, each counted once)
    leaderChanges: counter('botmesh_leader_changes_total', 'Leads granted to a replica (leader changes), by kind', ['kind']),
    leaseLosses: counter('botmesh_lease_losses_total', 'Turns and leads lost by a replica, by kind (chat, lead) and reason', [
      'kind',
      'reason',
    ]),
    evictions: counter('botmesh_evictions_total', 'Replicas evicted by an operator (replica evict)'),
    interventions: counter('botmesh_interventions_total', "Operators' interventions that changed something, by kind", ['kind']),
    handovers: counter('botmesh_handovers_total', 'Handovers of async conversations reported by the runtime, by outcome', ['outcome']),
    // ---- the exporter itself
    redisUp: gauge('botmesh_redis_up', 'The last scrape read Redis (0: unreachable or too slow; see botmesh_scrape_last_error_info)'),
    lastError: gauge('botmesh_scrape_last_error_info', 'The error of the last failed scrape, as a label (1 while the last scrape failed)', [
      'error',
    ]),
    scrapeDuration: gauge('botmesh_scrape_duration_seconds', 'How long the last scrape took to read Redis'),
    scrapeCommands: gauge('botmesh_scrape_redis_commands', 'Redis commands the last scrape sent (bounded: flat in the number of chats)'),
    scrapeErrors: counter('botmesh_scrape_errors_total', 'Scrapes that could not read Redis'),
  }
  return m
}

/**
 * The metrics of the state read (the gauges, and the replicas' running totals read from their
 * heartbeats; not the event counters, not the exporter's own): cleared when a scrape fails, so
 * nothing stale is served.
 */
export function stateGauges(m: ExporterMetrics): Array<Gauge | Counter> {
  return [
    m.replicas,
    m.leases,
    m.leasesUnread,
    m.renewalOverdueMax,
    m.heartbeatOverdueMax,
    m.turnsWaiting,
    m.replicaWaiting,
    m.replicaOldestWait,
    m.replicaTurnsGranted,
    m.replicaTurnsShed,
    m.chatsWaiting,
    m.queueLongest,
    m.oldestWait,
    m.chatsStuck,
    m.leaderPresent,
    m.leaderLate,
    m.transportDown,
    m.vacant,
    m.fence,
    m.yieldPending,
    m.corruptRecords,
    m.schemaCompatible,
  ]
}

/** Set the state gauges from one read (the dashboard's bounded read) and the schema check. */
export function setState(m: ExporterMetrics, snap: DashboardSnapshot, schemaOk: boolean, opts: { turnWaitMs?: number } = {}): void {
  for (const g of stateGauges(m)) g.reset()
  const now = snap.nowMs
  const live = liveness(snap.replicas, now)
  let heartbeatOverdue = 0
  const replicaStates = { ok: 0, late: 0 }
  let waiting = 0
  let reported = 0
  for (const r of snap.replicas) {
    const h = replicaHealth(r, now)
    if (h.state === 'ok' || h.state === 'late') {
      replicaStates[h.state]++
      if (reported++ < MAX_REPLICAS) {
        // Older replicas' records carry no oldestWaitMs / turnsShed: none waited, none shed.
        const labels = { replica: r.replicaId }
        m.replicaWaiting.set(labels, count(r.stats.waitingNow))
        m.replicaOldestWait.set(labels, count(r.stats.oldestWaitMs) / 1000)
        m.replicaTurnsGranted.inc(labels, count(r.stats.turnsGranted)) // from 0 (reset above): set to the replica's count
        m.replicaTurnsShed.inc(labels, count(r.stats.turnsShed))
      }
    }
    heartbeatOverdue = Math.max(heartbeatOverdue, h.renewalOverdueMs)
    waiting += r.stats.waitingNow
  }
  for (const [state, n] of Object.entries(replicaStates)) m.replicas.set({ state }, n)
  m.heartbeatOverdueMax.set(heartbeatOverdue / 1000)
  m.turnsWaiting.set(waiting)

  const leases = new Map<string, number>()
  for (const kind of ['chat', 'provider', 'scheduler', 'lead']) for (const state of LEASE_STATES) leases.set(`${kind}|${state}`, 0)
  let overdue = 0
  const countLease = (kind: string, state: LeaseState, renewalOverdueMs: number | null) => {
    leases.set(`${kind}|${state}`, (leases.get(`${kind}|${state}`) ?? 0) + 1)
    overdue = Math.max(overdue, renewalOverdueMs ?? 0)
  }

  const stuck = new Map<string, number>(CHAT_REASONS.map((r) => [r, 0]))
  let chatsWaiting = 0
  let longest = 0
  let oldest = 0
  // Per incarnation, the turns this read saw it hold (the rest of its own count is added below).
  const seen = new Map<string, number>()
  for (const c of snap.chats) {
    const health = c.health ?? chatHealth(c.chat, live, now, opts)
    if (health.holder) countLease('chat', health.holder.state, health.holder.renewalOverdueMs)
    const h = c.chat.holder
    if (h) seen.set(h.incarnation, (seen.get(h.incarnation) ?? 0) + 1)
    if (health.queueLength > 0) chatsWaiting++
    longest = Math.max(longest, health.queueLength)
    oldest = Math.max(oldest, health.oldestWaitMs ?? 0)
    if (health.state === 'stuck') {
      for (const f of health.findings) if (f.severity === 'problem') stuck.set(f.code, (stuck.get(f.code) ?? 0) + 1)
    }
  }
  // Turns the read did not reach (it reads the chats heartbeats name, 100 per replica, and the
  // busiest ones): each live replica's own count says how many it holds; the rest of them are
  // counted in its heartbeat's state.
  let unread = 0
  for (const r of snap.replicas) {
    const state = replicaHealth(r, now).state
    if (state !== 'ok' && state !== 'late') continue
    const more = count(r.stats.turnsHeld) - (seen.get(r.incarnation) ?? 0)
    if (more <= 0) continue
    unread += more
    leases.set(`chat|${state}`, (leases.get(`chat|${state}`) ?? 0) + more)
  }
  m.leasesUnread.set(unread)
  for (const [reason, n] of stuck) m.chatsStuck.set({ reason }, n)
  m.chatsWaiting.set(chatsWaiting)
  m.queueLongest.set(longest)
  m.oldestWait.set(oldest / 1000)

  snap.providers.forEach((l, i) => {
    const health = leadHealth(l, live, now)
    const kind = leadKind(l.key)
    if (health.leader) countLease(kind, health.leader.state, health.leader.renewalOverdueMs)
    if (i >= MAX_LEADS) return
    const labels = { lead: l.key, kind }
    m.leaderPresent.set(labels, l.holder ? 1 : 0)
    m.leaderLate.set(labels, health.state === 'late' ? 1 : 0)
    m.transportDown.set(labels, (health.transportDown?.downForMs ?? 0) / 1000)
    m.vacant.set(labels, (health.vacantForMs ?? 0) / 1000)
    if (l.fence !== null) m.fence.set(labels, l.fence)
    m.yieldPending.set(labels, l.yieldRequest && l.yieldRequest.expiresAtMs > now ? 1 : 0)
  })
  for (const [k, n] of leases) {
    const [kind, state] = k.split('|') as [string, string]
    m.leases.set({ kind, state }, n)
  }
  m.renewalOverdueMax.set(overdue / 1000)
  m.corruptRecords.set(snap.corrupt.length)
  m.schemaCompatible.set(schemaOk ? 1 : 0)
}

/** A count from a heartbeat record (written by another process): 0 when absent or not a count. */
function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0
}

/** Count the entries of the event stream read since the last scrape (each entry once). */
export function countEvents(m: ExporterMetrics, events: Array<{ id: string; event: Record<string, unknown> }>): void {
  for (const { event: e } of events) {
    switch (e.type) {
      case 'leader':
        m.leaderChanges.inc({ kind: leadKind(String(e.name ?? '')) })
        break
      case 'lease-lost':
        m.leaseLosses.inc({ kind: e.kind === 'lead' ? 'lead' : 'chat', reason: String(e.reason ?? 'unknown') })
        break
      case 'handover':
        m.handovers.inc({ outcome: HANDOVER_OUTCOMES.has(String(e.outcome)) ? String(e.outcome) : 'other' })
        break
      case 'intervention':
        if (e.changed === false) break
        m.interventions.inc({ kind: String(e.kind ?? 'other') })
        if (e.kind === 'replica') m.evictions.inc()
        break
    }
  }
}

/** Every metric of the registry: name, type, help, labels (the README's list is generated from it). */
export async function describeMetrics(): Promise<Array<{ name: string; type: string; help: string; labels: string[] }>> {
  const m = exporterMetrics()
  const json = await m.registry.getMetricsAsJSON()
  return json.map((x) => {
    const metric = m.registry.getSingleMetric(x.name) as unknown as { labelNames?: string[] }
    return { name: x.name, type: String(x.type), help: x.help, labels: metric.labelNames ?? [] }
  })
}

/** What one inventory pass counted. */
export interface InventoryCounts {
  checkpoints: number
  handovers: number
  /** Heartbeat records past their expiry (replicas gone without an orderly stop, kept GONE_KEEP_MS). */
  replicasGone: number
}

/** The counts of a completed inventory pass. */
export function setInventory(m: ExporterMetrics, counts: InventoryCounts): void {
  m.checkpoints.set(counts.checkpoints)
  m.handoverMarkers.set(counts.handovers)
  m.replicasGone.set(counts.replicasGone)
}
