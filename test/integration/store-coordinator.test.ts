/**
 * `store.coordinator()` is the store's one coordinator: one replica per process, on the store's
 * client, prefix and idle TTL — as the seed's `tryLead` example, which calls it again, expects.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { ConfigurationError, RedisCoordinator, RedisStore } from '../../src/index.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

function store(options: ConstructorParameters<typeof RedisStore>[0] = {}) {
  const s = new RedisStore({ url: redisUrl(), prefix: uniquePrefix('one'), ...options })
  cleanup.push(() => s.close())
  return s
}

describe('store.coordinator()', () => {
  it('returns the same coordinator on every call: one replica, one heartbeat', async () => {
    const s = store()
    const c = s.coordinator({ leaseMs: '15s' })
    cleanup.push(() => c.stop())
    await c.start()
    expect(s.coordinator()).toBe(c)
    expect(s.coordinator({ leaseMs: 15_000 })).toBe(c) // the same option, spelled otherwise
    const lead = await s.coordinator().tryLead('job:report')
    expect(lead).not.toBeNull()
    await lead!.release()
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    expect(await client.zrange(s.keys.replicaIndex, '0', '-1')).toEqual([c.replicaId])
  })

  it.each([
    ['leaseMs', { leaseMs: 10_000 }],
    ['replicaId', { replicaId: 'pod-b' }],
    ['turnWaitMs', { turnWaitMs: '1m' }],
    ['idleKeyTtlMs', { idleKeyTtlMs: 5000 }],
    ['meta', { meta: { host: 'elsewhere' } }],
  ])('refuses a later call whose %s differs, naming it', (name, options) => {
    const s = store()
    s.coordinator({ leaseMs: 15_000, replicaId: 'pod-a' })
    expect(() => s.coordinator(options)).toThrow(ConfigurationError)
    expect(() => s.coordinator(options)).toThrow(new RegExp(`\\b${name}\\b`))
  })

  it('makes a fresh coordinator once the last one was stopped', async () => {
    const s = store()
    const c = s.coordinator()
    await c.start()
    await c.stop()
    const next = s.coordinator()
    cleanup.push(() => next.stop())
    expect(next).not.toBe(c)
    await next.start()
    expect(next.incarnation).not.toBe(c.incarnation)
  })

  it("passes on the store's idleKeyTtlMs: an idle chat's keys expire with it", async () => {
    const s = store({ idleKeyTtlMs: 1000 })
    const c = s.coordinator({ leaseMs: 900 })
    cleanup.push(() => c.stop())
    expect(c.idleKeyTtlMs).toBe(1000)
    const t = await c.acquireTurn('chat:idle')
    await t.release()
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const ttl = await client.pttl(s.keys.chat('chat:idle').state)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(2 * 900 + 1000)
  })
})

describe('the default replicaId', () => {
  it('is one UUID per process, whichever way the coordinator is made; incarnations differ', () => {
    const a = new RedisCoordinator({ url: redisUrl(), prefix: uniquePrefix('one') })
    cleanup.push(() => a.stop())
    const b = store().coordinator()
    const m = new MemoryCoordinator({ hub: new MemoryCoordinationHub() })
    expect(a.replicaId).toMatch(/^[0-9a-f-]{36}$/)
    expect(b.replicaId).toBe(a.replicaId)
    expect(m.replicaId).toBe(a.replicaId)
    expect(new Set([a.incarnation, b.incarnation, m.incarnation]).size).toBe(3)
  })
})
