/**
 * A chat's keys gone whole while a message waits (FLUSHALL, an evicted key, a restart without data,
 * on the same server: no failover to notice): the waiting message queues again and gets its turn,
 * instead of failing as `dropped` (which means an operator skipped its ticket).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, type Coordinator } from '../../src/index.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'

const started: Coordinator[] = []
afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((c) => c.stop()))
})

/** Replicas `a` and `b` on `prefix`, with `leaseMs`; stopped after the test. */
async function replicas(prefix: string, leaseMs: number): Promise<[Coordinator, Coordinator]> {
  const make = (replicaId: string) =>
    startCoordinator(() => new RedisCoordinator({ url: redisUrl(), prefix, replicaId, leaseMs, turnWaitMs: 10_000 }))
  const pair: [Coordinator, Coordinator] = [await make('a'), await make('b')]
  started.push(...pair)
  return pair
}

describe('a chat whose keys vanished under a waiting message', () => {
  it('the message queues again and is granted; an operator-style removal of its ticket alone still fails it as dropped', async () => {
    const prefix = uniquePrefix('lost')
    const [a, b] = await replicas(prefix, 1200)
    const raw = new Redis(redisUrl())
    try {
      const k = new KeyLayout(prefix, 'standalone').chat('chat:1')
      const held = await a.acquireTurn('chat:1')
      const waiting = b.acquireTurn('chat:1')
      await untilQueued({ redis: raw, keys: new KeyLayout(prefix, 'standalone') }, 'chat:1', ['b'])
      // The chat's keys go whole, as a FLUSHALL would take them (the shared test server keeps others').
      await raw.del(k.state as string, k.queue as string)
      const turn = await waiting
      expect(turn.fence).toBeGreaterThan(held.fence)
      await turn.release()
      await held.release()

      // Only the ticket removed (the chat's state kept), as `chat skip` does: that is a drop.
      const again = await a.acquireTurn('chat:1')
      const skipped = b.acquireTurn('chat:1').catch((e: unknown) => e)
      await untilQueued({ redis: raw, keys: new KeyLayout(prefix, 'standalone') }, 'chat:1', ['b'])
      const ticket = (await raw.zrange(k.queue as string, '0', '0'))[0]!
      await raw.zrem(k.queue as string, ticket)
      await raw.hdel(k.state as string, `t:${ticket}`, `q:${ticket}`)
      expect(await skipped).toMatchObject({ reason: 'dropped' })
      await again.release()
    } finally {
      await raw.quit()
    }
  })

  it("a later message of the same replica that finds the chat's state gone is granted after the earlier one, not before", async () => {
    const prefix = uniquePrefix('lost-fifo')
    // A long keeper interval: the earlier message does not poll on its own before the later one arrives.
    const [a, b] = await replicas(prefix, 6000)
    const raw = new Redis(redisUrl())
    try {
      const keys = new KeyLayout(prefix, 'standalone')
      const k = keys.chat('chat:1')
      await a.acquireTurn('chat:1') // held by a, never released here: its state goes below
      const order: string[] = []
      const first = b.acquireTurn('chat:1').then((t) => (order.push('first'), t))
      await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
      // The chat's keys go whole (evicted): the first message's ticket with them, unknown to b.
      await raw.del(k.state as string, k.queue as string)
      // b's next message finds the chat free: it must not go before the first.
      const second = b.acquireTurn('chat:1').then((t) => (order.push('second'), t))
      const t1 = await first
      expect(order).toEqual(['first'])
      await t1.release()
      const t2 = await second
      expect(order).toEqual(['first', 'second'])
      expect(t2.fence).toBeGreaterThan(t1.fence)
      await t2.release()
    } finally {
      await raw.quit()
    }
  })
})
