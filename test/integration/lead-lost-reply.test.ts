/**
 * A lead granted in Redis whose reply was lost (the connection dropped; ioredis sends the command
 * again after reconnecting): the second run of lead-acquire finds the lead already this incarnation's.
 * Before, that answer was taken as "no lead": tryLead returned null and a campaign re-polled every few
 * milliseconds while the lead stayed unserved for a whole lease. Now it is taken up — renewed by that
 * same call, so its local deadline (from the call's send time) stays before Redis's expiry — unless
 * this coordinator held that fence before (a release of it may still be on its way).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { leadView } from '../helpers/shared-state.js'
import { replyEater } from '../helpers/proxies.js'
import { until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a lead whose grant reply was lost', () => {
  it('is taken up by the call the client sends again, with the fence Redis holds', async () => {
    const url = redisUrl()
    const prefix = uniquePrefix('leadreply')
    const proxy = await replyEater(Number(new URL(url).port))
    cleanup.push(() => proxy.close())
    const reader = connect({ url, layout: 'standalone' })
    cleanup.push(async () => reader.disconnect())
    const on = { redis: reader, keys: new KeyLayout(prefix, 'standalone') }
    const a = await startCoordinator(
      () => new RedisCoordinator({ url: `redis://127.0.0.1:${proxy.port}`, prefix, replicaId: 'a', leaseMs: 6000 }),
    )
    cleanup.push(() => a.stop())
    const b = await startCoordinator(() => new RedisCoordinator({ url, prefix, replicaId: 'b', leaseMs: 6000 }))
    cleanup.push(() => b.stop())

    await (await a.tryLead('job:warm-up'))!.release() // the script is in Redis's cache (no NOSCRIPT round trip)
    proxy.eatReplies(true) // Redis grants the lead; the reply never arrives…
    const attempt = a.tryLead('job:report')
    const granted = await until(
      async () => {
        const l = await leadView(on, 'job:report')
        return l.holder === 'a' && l
      },
      5000,
      'the lead granted to a in Redis',
    )
    proxy.dropAll() // …the connection drops; the client reconnects and sends the command again
    proxy.eatReplies(false)
    const lead = await attempt
    expect(lead).not.toBeNull()
    expect(lead!.fence).toBe(granted.fence)
    expect(lead!.held).toBe(true)
    expect(await a.tryLead('job:report')).toBeNull() // held here now: no second handle
    expect(await b.tryLead('job:report')).toBeNull()
    await lead!.release()
    expect((await leadView(on, 'job:report')).holder).toBeNull()
    // A fence this coordinator held and gave back is never taken up again, whatever Redis answers.
    const again = await b.tryLead('job:report')
    expect(again!.fence).toBeGreaterThan(granted.fence!)
    await again!.release()
  })
})
