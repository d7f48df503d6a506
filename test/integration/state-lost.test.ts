/**
 * A chat's keys gone whole while a message waits (FLUSHALL, an evicted key, a restart without data,
 * on the same server: no failover to notice): the waiting message queues again and gets its turn,
 * instead of failing as `dropped` (which means an operator skipped its ticket). The same when
 * another replica rebuilt the state before the waiting one polled, and when Redis evicted the queue
 * key alone (its tickets are still in the chat's hash, which rebuilds it).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, type Coordinator } from '../../src/index.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'

const started: Coordinator[] = []
const clients: Redis[] = []
afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((c) => c.stop()))
  await Promise.allSettled(clients.splice(0).map((r) => r.quit()))
})

/**
 * Replicas `a`, `b` and `c` on a new prefix, with `leaseMs`, and a plain client for the test's own
 * reads and deletions, with `chat:1`'s keys; all stopped or closed after the test.
 */
async function scene(name: string, leaseMs: number) {
  const prefix = uniquePrefix(name)
  const make = (replicaId: string) =>
    startCoordinator(() => new RedisCoordinator({ url: redisUrl(), prefix, replicaId, leaseMs, turnWaitMs: 10_000 }))
  const all: [Coordinator, Coordinator, Coordinator] = [await make('a'), await make('b'), await make('c')]
  started.push(...all)
  const raw = new Redis(redisUrl())
  clients.push(raw)
  const keys = new KeyLayout(prefix, 'standalone')
  return { replicas: all, raw, keys, k: keys.chat('chat:1') }
}

describe('a chat whose keys vanished under a waiting message', () => {
  it('the message queues again and is granted; an operator-style removal of its ticket alone still fails it as dropped', async () => {
    const {
      replicas: [a, b],
      raw,
      keys,
      k,
    } = await scene('lost', 1200)
    const held = await a.acquireTurn('chat:1')
    const waiting = b.acquireTurn('chat:1')
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    // The chat's keys go whole, as a FLUSHALL would take them (the shared test server keeps others').
    await raw.del(k.state as string, k.queue as string)
    const turn = await waiting
    expect(turn.fence).toBeGreaterThan(held.fence)
    await turn.release()
    await held.release()

    // Only the ticket removed (the chat's state kept), as `chat skip` does: that is a drop.
    const again = await a.acquireTurn('chat:1')
    const skipped = b.acquireTurn('chat:1').catch((e: unknown) => e)
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    const ticket = (await raw.zrange(k.queue as string, '0', '0'))[0]!
    await raw.zrem(k.queue as string, ticket)
    await raw.hdel(k.state as string, `t:${ticket}`, `q:${ticket}`)
    expect(await skipped).toMatchObject({ reason: 'dropped' })
    await again.release()
  })

  it("a later message of the same replica that finds the chat's state gone is granted after the earlier one, not before", async () => {
    // A long keeper interval: the earlier message does not poll on its own before the later one arrives.
    const {
      replicas: [a, b],
      raw,
      keys,
      k,
    } = await scene('lost-fifo', 6000)
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
  })

  it("a waiting message whose chat's state another replica rebuilt before it polled queues again, not dropped", async () => {
    const {
      replicas: [a, b, c],
      raw,
      keys,
      k,
    } = await scene('lost-rebuilt', 1200)
    await a.acquireTurn('chat:1') // ticket 1, never released here: its state goes below
    const waiting = b.acquireTurn('chat:1') // ticket 2
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    await raw.del(k.state as string, k.queue as string)
    // c's take rebuilds the chat (its ticket 1) before b's keeper polls: b's poll finds its ticket
    // gone from a chat that has a fence, but fewer tickets issued than its own.
    const rebuilt = await c.acquireTurn('chat:1')
    expect(await raw.hget(k.state as string, 'n')).toBe('1')
    await rebuilt.release()
    const turn = await waiting
    expect(turn.fence).toBeGreaterThan(rebuilt.fence)
    await turn.release()
  })

  it("a waiting message whose chat's state was made again and issued its ticket's number to another queues again, not dropped", async () => {
    // A long keeper interval: the rebuilt state issues ticket 2 to c before b's keeper polls.
    const {
      replicas: [a, b, c],
      raw,
      keys,
      k,
    } = await scene('lost-renumbered', 6000)
    await a.acquireTurn('chat:1') // ticket 1, never released here: its state goes below
    const waiting = b.acquireTurn('chat:1') // ticket 2
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    const epoch = await raw.hget(k.state as string, 'ep')
    expect(epoch).toMatch(/^\d+$/)
    await raw.del(k.state as string, k.queue as string)
    // c's takes make the chat again: ticket 1 granted, ticket 2 queued behind it, as many tickets
    // issued as b's number. b's poll finds its number held by c's ticket, in a state of another epoch.
    const first = await c.acquireTurn('chat:1')
    const second = c.acquireTurn('chat:1')
    await untilQueued({ redis: raw, keys }, 'chat:1', ['c'])
    expect(await raw.hget(k.state as string, 'n')).toBe('2')
    expect(await raw.hget(k.state as string, 'ep')).not.toBe(epoch)
    // b queues again behind c's second message (ticket 3), in the state made again.
    await until(async () => expect(await raw.zrange(k.queue as string, '0', '-1')).toEqual(['2', '3']), 5000)
    await first.release()
    const t2 = await second
    await t2.release()
    const turn = await waiting
    expect(turn.fence).toBeGreaterThan(t2.fence)
    await turn.release()
  })

  it('a queue key evicted alone is rebuilt from the tickets in the chat hash, oldest first', async () => {
    const {
      replicas: [a, b, c],
      raw,
      keys,
      k,
    } = await scene('lost-queue', 6000)
    const order: string[] = []
    const take = (by: Coordinator, name: string) =>
      by.acquireTurn('chat:1').then(async (t) => {
        order.push(name)
        await t.release()
      })
    const held = await a.acquireTurn('chat:1') // ticket 1
    const first = take(b, 'b-first') // ticket 2
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    expect(await raw.del(k.queue as string)).toBe(1) // the hash keeps t:2
    // Another replica's take, then a later message of b: both behind b's first, not ahead of it.
    const other = take(c, 'c')
    await until(async () => expect(await raw.hexists(k.state as string, 't:3')).toBe(1))
    const second = take(b, 'b-second')
    await until(async () => expect(await raw.zrange(k.queue as string, '0', '-1')).toEqual(['2', '3', '4']))
    await held.release()
    await Promise.all([first, other, second])
    expect(order).toEqual(['b-first', 'c', 'b-second'])

    // The same loss found by the holder's release: nobody takes a ticket after it.
    const held2 = await a.acquireTurn('chat:1')
    const waiting = take(b, 'b-third')
    await untilQueued({ redis: raw, keys }, 'chat:1', ['b'])
    await raw.del(k.queue as string)
    await held2.release()
    await waiting
    expect(order.at(-1)).toBe('b-third')
  })
})
