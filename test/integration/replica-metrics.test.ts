/**
 * registerMetrics on a real Redis: a RedisCoordinator with a small maxWaiting takes real turns,
 * queues messages behind them and refuses one more; its prom-client registry says so — waiting now,
 * how long the oldest has waited, turns granted, messages shed — and a shed is counted once however
 * often the registry is collected.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { CoordinationUnavailableError, RedisCoordinator, registerMetrics, type Turn } from '../../src/index.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

/** The value of one sample of the registry's text exposition (undefined: no such sample). */
async function sample(registry: Registry, series: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('registerMetrics on a RedisCoordinator', () => {
  it('waiting now, the oldest wait, turns granted and messages shed, after real turns', async () => {
    const c = await startCoordinator(
      () => new RedisCoordinator({ url: redisUrl(), prefix: uniquePrefix('rmetrics'), replicaId: 'pod-m', leaseMs: 3000, maxWaiting: 2 }),
    )
    cleanup.push(() => c.stop())
    const registry = new Registry()
    const stop = registerMetrics(c, { Counter, Gauge, Histogram, register: registry }, { registry })
    cleanup.push(async () => stop())
    const m = (n: string) => sample(registry, `botmesh_replica_${n}`)

    expect(await m('turns_granted_total')).toBe(0)
    expect(await m('turns_shed_total')).toBe(0)
    expect(await m('oldest_wait_seconds')).toBe(0)

    const first = await c.acquireTurn('chat:1')
    expect(await m('turns_granted_total')).toBe(1)

    // Two messages wait behind the held turn: maxWaiting (2) is reached.
    const before = performance.now()
    const waits: Array<Promise<Turn>> = [c.acquireTurn('chat:1', { waitMs: 20_000 }), c.acquireTurn('chat:1', { waitMs: 20_000 })]
    cleanup.push(() => Promise.allSettled(waits))
    await until(() => c.metrics.waitingNow === 2, 5000, 'two messages waiting')
    await new Promise((r) => setTimeout(r, 300))
    expect(await m('waiting_turns')).toBe(2)
    const oldest = (await m('oldest_wait_seconds'))!
    expect(oldest).toBeGreaterThanOrEqual(0.3)
    expect(oldest).toBeLessThanOrEqual((performance.now() - before) / 1000 + 0.01) // seconds, since the first wait began

    // One more is refused at once, on any chat: the limit is the replica's.
    const refused = await c.acquireTurn('chat:2').catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(CoordinationUnavailableError)
    expect((refused as CoordinationUnavailableError).reason).toBe('overloaded')
    expect(c.metrics.turnsShed).toBe(1)
    expect(await m('turns_shed_total')).toBe(1)
    expect(await m('turns_shed_total')).toBe(1) // collected again: still one, not counted twice
    await expect(c.acquireTurn('chat:3')).rejects.toMatchObject({ reason: 'overloaded' })
    expect(await m('turns_shed_total')).toBe(2)
    expect(await m('turns_granted_total')).toBe(1) // a refusal is no grant

    // The queue drains: each release grants the next waiting message.
    await first.release()
    await (await waits[0]!).release()
    await (await waits[1]!).release()
    expect(await m('turns_granted_total')).toBe(3)
    expect(await m('turn_wait_seconds_count')).toBe(3)
    expect(await m('waiting_turns')).toBe(0)
    expect(await m('oldest_wait_seconds')).toBe(0)
    expect(await m('turns_shed_total')).toBe(2)

    // With room again, a message is not refused.
    await (await c.acquireTurn('chat:2')).release()
    expect(await m('turns_granted_total')).toBe(4)
    expect(await m('turns_shed_total')).toBe(2)

    stop()
    expect((await registry.metrics()).trim()).toBe('')
  })

  it('counts from registration on: what was shed before is not counted again', async () => {
    const c = await startCoordinator(
      () => new RedisCoordinator({ url: redisUrl(), prefix: uniquePrefix('rmetrics'), replicaId: 'pod-n', leaseMs: 3000, maxWaiting: 1 }),
    )
    cleanup.push(() => c.stop())
    const held = await c.acquireTurn('chat:1')
    const wait = c.acquireTurn('chat:1', { waitMs: 20_000 })
    cleanup.push(() => wait.then((t) => t.release()))
    await until(() => c.metrics.waitingNow === 1, 5000, 'one message waiting')
    await expect(c.acquireTurn('chat:2')).rejects.toMatchObject({ reason: 'overloaded' })
    expect(c.metrics.turnsShed).toBe(1)

    const registry = new Registry()
    const stop = registerMetrics(c, { Counter, Gauge, Histogram, register: registry }, { registry })
    cleanup.push(async () => stop())
    expect(await sample(registry, 'botmesh_replica_turns_shed_total')).toBe(0)
    await expect(c.acquireTurn('chat:2')).rejects.toMatchObject({ reason: 'overloaded' })
    expect(await sample(registry, 'botmesh_replica_turns_shed_total')).toBe(1)
    await held.release()
    await until(async () => (await sample(registry, 'botmesh_replica_turns_granted_total')) === 1, 5000, 'the waiting message granted')
    expect(await sample(registry, 'botmesh_replica_waiting_turns')).toBe(0)
  })
})
