/**
 * `botmesh-coord exporter` against a private redis-server with real replicas: the state as metrics
 * (decided by the health model), counters from the event stream counted once, no per-chat label,
 * /healthz, a frozen Redis answered at once with botmesh_redis_up 0, and a bad --listen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore, type Turn } from '../../src/index.js'
import { runCli } from '../helpers/cli.js'
import { startExporter, type ExporterProc } from '../helpers/exporter.js'
import { startCoordinator, startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'

describe('exporter', () => {
  let redis: RedisProc
  let store: RedisStore
  let a: RedisCoordinator
  let b: RedisCoordinator
  let exporter: ExporterProc
  let waiting: Promise<Turn | null>
  const prefix = uniquePrefix('exp')

  beforeAll(async () => {
    redis = await startRedis()
    store = new RedisStore({ url: redis.url, prefix })
    a = await startCoordinator(() => new RedisCoordinator({ url: redis.url, prefix, replicaId: 'pod-a', leaseMs: 6000 }))
    // pod-b lets one message wait at most (maxWaiting): a second one is refused as 'overloaded'.
    b = await startCoordinator(() => new RedisCoordinator({ url: redis.url, prefix, replicaId: 'pod-b', leaseMs: 6000, maxWaiting: 1 }))
    await a.acquireTurn('chat:1')
    expect(await a.tryLead('provider:wa')).not.toBeNull() // a leader event before the exporter starts
    waiting = b.acquireTurn('chat:1', { waitMs: 60_000 }).catch(() => null)
    await untilQueued(store, 'chat:1', ['pod-b'])
    await expect(b.acquireTurn('chat:2')).rejects.toMatchObject({ reason: 'overloaded' })
    await store.setCheckpointIf('chat:9', { flow: 'signup', step: 'email', state: {} }, null)
    await store.setHandoverMarker('chat:7', { name: 'survey', replicaId: 'pod-a', incarnation: a.incarnation, ttlMs: 600_000 })
    await Promise.all([a.renewNow(), b.renewNow()]) // their heartbeats list what they hold and wait for: what a scrape reads
    exporter = await startExporter(['--url', redis.url, '--prefix', prefix], ['--scrape-timeout', '500ms'])
  }, 60_000)

  afterAll(async () => {
    await exporter?.stop()
    await Promise.all([a?.stop(), b?.stop()])
    await waiting
    await store?.close()
    await redis?.stop()
  })

  it('serves the state: replicas, leases by kind and state, the queue, the lead — never a chat key', async () => {
    expect(await exporter.get('/healthz')).toEqual({ status: 200, text: 'ok\n' })
    const { status, text } = await exporter.get('/metrics')
    expect(status).toBe(200)
    const value = (series: string) =>
      text
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.split(' ')[1]
    expect(value('botmesh_redis_up')).toBe('1')
    expect(value('botmesh_replicas{state="ok"}')).toBe('2')
    expect(value('botmesh_leases{kind="chat",state="ok"}')).toBe('1')
    expect(value('botmesh_leases{kind="provider",state="ok"}')).toBe('1')
    expect(value('botmesh_lead_leader_present{lead="provider:wa",kind="provider"}')).toBe('1')
    expect(value('botmesh_lead_leader_late{lead="provider:wa",kind="provider"}')).toBe('0')
    expect(value('botmesh_chats_waiting')).toBe('1')
    expect(value('botmesh_chat_queue_longest')).toBe('1')
    expect(value('botmesh_turns_waiting')).toBe('1')
    // Per live replica, from its heartbeat: pod-a holds chat:1 (one grant), pod-b waits behind it and shed one.
    expect(value('botmesh_heartbeat_waiting_turns{replica="pod-a"}')).toBe('0')
    expect(value('botmesh_heartbeat_waiting_turns{replica="pod-b"}')).toBe('1')
    expect(value('botmesh_heartbeat_oldest_wait_seconds{replica="pod-a"}')).toBe('0')
    expect(Number(value('botmesh_heartbeat_oldest_wait_seconds{replica="pod-b"}'))).toBeGreaterThan(0)
    expect(Number(value('botmesh_heartbeat_oldest_wait_seconds{replica="pod-b"}'))).toBeLessThan(60) // seconds, not ms
    expect(value('botmesh_heartbeat_turns_granted_total{replica="pod-a"}')).toBe('1')
    expect(value('botmesh_heartbeat_turns_granted_total{replica="pod-b"}')).toBe('0')
    expect(value('botmesh_heartbeat_turns_shed_total{replica="pod-a"}')).toBe('0')
    expect(value('botmesh_heartbeat_turns_shed_total{replica="pod-b"}')).toBe('1')
    expect(text).toMatch(/^# TYPE botmesh_heartbeat_turns_shed_total counter$/m)
    expect(value('botmesh_schema_compatible')).toBe('1')
    expect(Number(value('botmesh_scrape_redis_commands'))).toBeGreaterThan(0)
    expect(text).not.toContain('chat:1')
    expect((await exporter.get('/nope')).status).toBe(404)
  })

  it('counts checkpoints and handover markers by an inventory walked a bounded step per scrape', async () => {
    await until(async () => (await exporter.sample('botmesh_checkpoints')) === 1, 10_000, 'the inventory pass')
    expect(await exporter.sample('botmesh_handover_markers')).toBe(1)
    expect(await exporter.sample('botmesh_inventory_age_seconds')).toBeGreaterThanOrEqual(0)
  })

  it('counts events once: only those after it started, never again on the next scrape', async () => {
    const series = 'botmesh_leader_changes_total{kind="scheduler"}'
    expect(await exporter.sample('botmesh_leader_changes_total{kind="provider"}')).toBeUndefined()
    expect(await b.tryLead('scheduler:report')).not.toBeNull()
    await until(async () => (await exporter.sample(series)) === 1, 5000, 'the leader event counted')
    expect(await exporter.sample(series)).toBe(1)
    expect(await exporter.sample(series)).toBe(1)
  })

  it('answers at once while Redis is frozen (botmesh_redis_up 0, the error) and recovers by itself', async () => {
    await redis.kill('SIGSTOP')
    try {
      const { text } = await exporter.get('/metrics')
      expect(text).toMatch(/^botmesh_redis_up 0$/m)
      expect(text).toMatch(/^botmesh_scrape_last_error_info\{error="[^"]+"\} 1$/m)
      expect(text).not.toMatch(/^botmesh_replicas\{/m) // nothing stale
      expect(text).not.toMatch(/^botmesh_heartbeat_turns_granted_total\{/m) // a running total is absent, never 0 (no false reset)
    } finally {
      await redis.kill('SIGCONT')
    }
    await until(async () => (await exporter.sample('botmesh_redis_up')) === 1, 10_000, 'botmesh_redis_up back to 1')
  })

  it('a bad --listen is one line and exit 2', async () => {
    const bad = await runCli(['--url', redis.url, '--prefix', prefix, 'exporter', '--listen', 'localhost'])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stderr).toMatch(/--listen "localhost" is not host:port/)
    const port = new URL(exporter.url).port
    const busy = await runCli(['--url', redis.url, '--prefix', prefix, 'exporter', '--listen', `127.0.0.1:${port}`])
    expect(busy.code).toBe(2)
    expect(busy.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+: address in use/)
  })
})
