/**
 * CoordinationAdmin reads its duration options like every other part of the library: `'24h'` is
 * 24 hours, not NaN sent to the scripts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CoordinationAdmin, RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const LEASE = 1500
const DAY = 24 * 3_600_000

describe('CoordinationAdmin options', () => {
  const closers: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => {})
  })

  it("idleKeyTtlMs: '24h' keeps an idle chat for 24 hours after an intervention", async () => {
    const prefix = uniquePrefix('admopt')
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix, idleKeyTtlMs: '24h' })
    closers.push(() => admin.close())
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', leaseMs: LEASE })
    closers.push(() => a.stop())
    const turn = await a.acquireTurn('chat:ttl')

    const res = await admin.releaseChat('chat:ttl', { ifFence: turn.fence, grantLeaseMs: LEASE })
    expect(res.status).toBe('released')
    const ttl = await admin.redis.pttl(admin.keys.chat('chat:ttl').state)
    // 2 × leaseMs + idleKeyTtlMs from the script's now; a few ms may have passed since.
    expect(ttl).toBeGreaterThan(DAY)
    expect(ttl).toBeLessThanOrEqual(2 * LEASE + DAY)
  })

  it('refuses an idleKeyTtlMs that is not a duration, as the coordinator and the store do', () => {
    expect(() => new CoordinationAdmin({ url: redisUrl(), prefix: uniquePrefix('admopt'), idleKeyTtlMs: 'a day' })).toThrow(/idleKeyTtlMs/)
  })
})
