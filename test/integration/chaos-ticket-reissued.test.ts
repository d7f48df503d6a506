/**
 * Found by the fault campaign (chaos/, faults `kill-after-send,failover-lossy`, run seed 292094966):
 * after Redis lost its last writes (a failover to a standby that had not replicated them; also a
 * restart without data, or an evicted key), a chat's ticket counter starts again from an older value
 * and hands out ticket numbers that were already given. When the number goes to another message of
 * the SAME replica, the two acquisitions used to share it: a ticket was known by its incarnation and
 * number only, so the message whose ticket was lost found the other one's grant ("its own") at its
 * next poll and took the turn too — two messages of one chat handled at once, the older one still
 * passing assertHeld() after the chat had been granted to the next replica.
 *
 * Expected: one holder at a time, and the replica's messages in their order. The second message's
 * take finds no ticket of its replica in the chat (no w: field): the first one's went with the lost
 * writes, so the second gives its ticket back, the first queues again, and the second behind it. (At
 * the script level, a ticket number given again answers only the acquisition that took it:
 * test/integration/turn-scripts.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { sleep, until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a ticket number given again after Redis lost writes (found by the fault campaign)', () => {
  it('is taken only by the acquisition it was given to: one holder at a time', async () => {
    const prefix = uniquePrefix('reissue')
    const k = new KeyLayout(prefix, 'standalone').chat('chat:1')
    const redis = new Redis(redisUrl())
    cleanup.push(() => redis.quit())
    const holder = new RedisCoordinator({ url: redisUrl(), prefix, leaseMs: 10_000 })
    // Woken by pushes; its own safety-net poll comes only every 1.5 s, after the loss below.
    const replica = new RedisCoordinator({ url: redisUrl(), prefix, leaseMs: 10_000, maxPollMs: 1500 })
    cleanup.push(() => holder.stop())
    cleanup.push(() => replica.stop())
    await Promise.all([holder.start(), replica.start()])

    const held = await holder.acquireTurn('chat:1') // ticket 1
    // What a standby that stops replicating now keeps of the chat.
    const [snapshot, ttl] = await Promise.all([redis.dumpBuffer(k.state), redis.pttl(k.state)])
    const first = replica.acquireTurn('chat:1', { waitMs: 20_000 }).catch((e: unknown) => e)
    await until(async () => (await redis.hexists(k.state, 't:2')) === 1, 5000, 'the first message to queue as ticket 2')
    // The failover: the writes since the snapshot are lost, the ticket counter is back at 1.
    await redis.restore(k.state, ttl > 0 ? ttl : 0, snapshot, 'REPLACE')
    await redis.del(k.queue)
    const order: string[] = []
    void first.then((t) => order.push(t instanceof Error ? `first failed: ${t.message}` : 'first'))
    const second = replica.acquireTurn('chat:1', { waitMs: 20_000 }).then((t) => (order.push('second'), t))
    // Both queue again, the first message ahead of the second.
    await until(async () => (await redis.zcard(k.queue)) === 2, 5000, 'both messages to queue again')

    await held.release()
    const t1 = await first
    expect(t1, 'the first message was dropped').not.toBeInstanceOf(Error)
    const turn1 = t1 as Awaited<typeof second>
    await sleep(200)
    expect(order).toEqual(['first']) // one holder at a time
    expect(turn1.held).toBe(true)
    await turn1.release()
    const turn2 = await second
    expect(order).toEqual(['first', 'second'])
    expect(turn2.fence).toBeGreaterThan(turn1.fence)
    await turn2.release()
  }, 30_000)
})
