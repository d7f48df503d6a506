import { describe, expect, it } from 'vitest'
import { Registry, Counter, Gauge, Histogram } from 'prom-client'
import { countEvents, exporterMetrics, setState } from '../../commands/exporter/metrics.js'
import { parseListen } from '../../commands/exporter/command.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'
import { registerMetrics } from '../../src/index.js'
import { NOW, chatState, dashboard, dashboardChat, holder, incarnationOf, lead, replica, ticket } from '../helpers/snapshots.js'

async function value(m: ReturnType<typeof exporterMetrics>, name: string, labels: Record<string, string> = {}) {
  const metric = (await m.registry.getSingleMetric(name)!.get()) as { values: Array<{ labels: Record<string, string>; value: number }> }
  return metric.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value
}

describe('exporter metrics', () => {
  it('are set from the health model: a late leader, a stuck chat behind a late holder, the queue', async () => {
    const m = exporterMetrics()
    const frozen = { lastRenewalMs: NOW - 9000 }
    setState(
      m,
      dashboard({
        providers: [
          lead('provider:wa', {
            replicaId: 'pod-a',
            incarnation: incarnationOf('pod-a'),
            expiresAtMs: NOW + 6000,
            sinceMs: NOW - 60_000,
            ...frozen,
          }),
          lead('provider:tg', null, { releasedAtMs: NOW - 4000 }),
        ],
        chats: [
          dashboardChat('chat:1', null, [], {
            chat: chatState('chat:1', {
              holder: holder('pod-a', frozen),
              tickets: [ticket(2, 'pod-b', { waitedMs: 3000 }), ticket(3, 'pod-b')],
            }),
          }),
          dashboardChat('chat:2', 'pod-b'),
        ],
      }),
      true,
    )
    expect(await value(m, 'botmesh_lead_leader_late', { lead: 'provider:wa' })).toBe(1)
    expect(await value(m, 'botmesh_lead_leader_present', { lead: 'provider:tg' })).toBe(0)
    expect(await value(m, 'botmesh_lead_vacant_seconds', { lead: 'provider:tg' })).toBe(4)
    expect(await value(m, 'botmesh_leases', { kind: 'provider', state: 'late' })).toBe(1)
    expect(await value(m, 'botmesh_leases', { kind: 'chat', state: 'late' })).toBe(1)
    expect(await value(m, 'botmesh_leases', { kind: 'chat', state: 'ok' })).toBe(1)
    expect(await value(m, 'botmesh_chats_stuck', { reason: 'holder-late' })).toBe(1)
    expect(await value(m, 'botmesh_chat_queue_longest')).toBe(2)
    expect(await value(m, 'botmesh_chat_oldest_wait_seconds')).toBe(3)
    expect(await value(m, 'botmesh_lease_renewal_overdue_max_seconds')).toBe(4)
    expect(await value(m, 'botmesh_schema_compatible')).toBe(1)
  })

  it('per live replica, from its heartbeat: waiting, the oldest wait, turns granted and shed; an older record reads 0', async () => {
    const m = exporterMetrics()
    const snap = (replicas: ReturnType<typeof replica>[]) => dashboard({ replicas, chats: [], providers: [], expiring: [] })
    setState(
      m,
      snap([
        replica('pod-a', { stats: { waitingNow: 7, oldestWaitMs: 95_500, turnsGranted: 1200, turnsShed: 3 } }),
        replica('pod-b', { stats: { waitingNow: 0, turnsGranted: 40 } }), // an older replica: no oldestWaitMs, no turnsShed
        replica('pod-c', { stats: { waitingNow: 2, oldestWaitMs: 1000 }, beatAgo: 20_000 }), // its heartbeat expired: not live
        replica('pod-d', { stats: { waitingNow: 1 }, evictedIncarnation: incarnationOf('pod-d') }), // evicted: its beats are refused
      ]),
      true,
    )
    expect(await value(m, 'botmesh_heartbeat_waiting_turns', { replica: 'pod-a' })).toBe(7)
    expect(await value(m, 'botmesh_heartbeat_oldest_wait_seconds', { replica: 'pod-a' })).toBe(95.5)
    expect(await value(m, 'botmesh_heartbeat_turns_granted_total', { replica: 'pod-a' })).toBe(1200)
    expect(await value(m, 'botmesh_heartbeat_turns_shed_total', { replica: 'pod-a' })).toBe(3)
    expect(await value(m, 'botmesh_heartbeat_oldest_wait_seconds', { replica: 'pod-b' })).toBe(0)
    expect(await value(m, 'botmesh_heartbeat_turns_shed_total', { replica: 'pod-b' })).toBe(0)
    expect(await value(m, 'botmesh_heartbeat_turns_granted_total', { replica: 'pod-b' })).toBe(40)
    expect(await value(m, 'botmesh_heartbeat_waiting_turns', { replica: 'pod-c' })).toBeUndefined()
    expect(await value(m, 'botmesh_heartbeat_waiting_turns', { replica: 'pod-d' })).toBeUndefined()

    // The next scrape sets the totals to what the heartbeats say now (not added to the last ones);
    // a replica gone from the read is gone from the metrics; a restarted one starts again from 0.
    setState(m, snap([replica('pod-a', { stats: { waitingNow: 0, oldestWaitMs: null, turnsGranted: 1500, turnsShed: 3 } })]), true)
    expect(await value(m, 'botmesh_heartbeat_turns_granted_total', { replica: 'pod-a' })).toBe(1500)
    expect(await value(m, 'botmesh_heartbeat_turns_shed_total', { replica: 'pod-a' })).toBe(3)
    expect(await value(m, 'botmesh_heartbeat_oldest_wait_seconds', { replica: 'pod-a' })).toBe(0)
    expect(await value(m, 'botmesh_heartbeat_turns_granted_total', { replica: 'pod-b' })).toBeUndefined()
    setState(m, snap([replica('pod-a', { incarnation: 'restarted', stats: { turnsGranted: 2 } })]), true)
    expect(await value(m, 'botmesh_heartbeat_turns_granted_total', { replica: 'pod-a' })).toBe(2)
  })

  it('count each event once, interventions that changed nothing not at all', async () => {
    const m = exporterMetrics()
    countEvents(m, [
      { id: '1-0', event: { type: 'leader', name: 'provider:wa' } },
      { id: '2-0', event: { type: 'lease-lost', kind: 'chat', reason: 'expired' } },
      { id: '3-0', event: { type: 'intervention', kind: 'replica', changed: true } },
      { id: '4-0', event: { type: 'intervention', kind: 'chat', changed: false } },
      { id: '5-0', event: { type: 'handover', outcome: 'my-own-fallback' } },
    ])
    expect(await value(m, 'botmesh_leader_changes_total', { kind: 'provider' })).toBe(1)
    expect(await value(m, 'botmesh_lease_losses_total', { reason: 'expired' })).toBe(1)
    expect(await value(m, 'botmesh_evictions_total')).toBe(1)
    expect(await value(m, 'botmesh_interventions_total', { kind: 'chat' })).toBeUndefined()
    expect(await value(m, 'botmesh_handovers_total', { outcome: 'other' })).toBe(1)
  })

  it('--listen: host:port, :port, [v6]:port; nothing else', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 })
    expect(parseListen(':9464')).toEqual({ host: '0.0.0.0', port: 9464 })
    expect(parseListen('[::1]:9')).toEqual({ host: '::1', port: 9 })
    for (const bad of ['9464', 'localhost', 'h:70000', 'h:-1', 'a b:1']) expect(() => parseListen(bad)).toThrow(/is not host:port/)
  })
})

describe('registerMetrics (a replica on the application`s registry)', () => {
  it('turn waits, renewal round trips, waiting now, the oldest wait, turns granted and shed (and the lease-loss counter); removed again', async () => {
    const registry = new Registry()
    const hub = new MemoryCoordinationHub()
    const c = new MemoryCoordinator({ hub, replicaId: 'r1', leaseMs: 3000 })
    await c.start()
    const stop = registerMetrics(c, { Counter, Gauge, Histogram, register: registry }, { registry })
    try {
      const turn = await c.acquireTurn('chat:1')
      await c.renewNow()
      const text = await registry.metrics()
      expect(text).toMatch(/^botmesh_replica_turn_wait_seconds_count 1$/m)
      expect(text).toMatch(/^botmesh_replica_renewal_round_trip_seconds_count [1-9]\d*$/m)
      expect(text).toMatch(/^botmesh_replica_waiting_turns 0$/m)
      expect(text).toMatch(/^botmesh_replica_oldest_wait_seconds 0$/m)
      expect(text).toMatch(/^botmesh_replica_turns_granted_total 1$/m)
      expect(text).toMatch(/^botmesh_replica_turns_shed_total 0$/m)
      expect(text).toMatch(/^# TYPE botmesh_replica_lease_losses_total counter$/m)
      await turn.release()
      c.crash()
    } finally {
      stop()
    }
    expect((await registry.metrics()).trim()).toBe('')
  })
})
