/**
 * A turn another replica's release offers to a waiter is used at once, without the poll that takes
 * the offer up: a short turn costs its take and its release only, read in the chat's hash (the offer
 * mark stays '1' while it is held untaken); a turn held longer is taken up by a renewal when a lease
 * granted at its bounding call would be renewed (the mark goes to '0', the lease runs a full leaseMs),
 * and survives a freeze of half a lease as any lease does; and either
 * way its release makes it the chat's last holder. A push of another take of the same ticket (one kept
 * from before a failover or a flush lost that grant) is not used: the waiter asks Redis, which says
 * the turn is still someone else's.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, type Coordinator, type RedisKey } from '../../src/index.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { sleep, until } from '../helpers/wait.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

describe('an offered turn, used without its take-up', () => {
  const started: Coordinator[] = []
  afterEach(async () => {
    await Promise.allSettled(started.splice(0).map((c) => c.stop()))
  })

  async function setup() {
    const prefix = uniquePrefix('offer')
    const make = (replicaId: string) =>
      startCoordinator(() => new RedisCoordinator({ url: redisUrl(), prefix, replicaId, leaseMs: 1500, maxPollMs: 50 })).then((c) => {
        started.push(c)
        return c
      })
    const keys = new KeyLayout(prefix, 'standalone')
    return {
      a: await make('a'),
      b: await make('b'),
      c: await make('c'),
      keys,
      state: (chat: string) => keys.chat(chat).state,
      queue: (chat: string) => keys.chat(chat).queue,
    }
  }

  /** `holder` takes `chat`'s turn, and `waiter` queues behind it (its acquisition, still waiting). */
  async function queueBehind(holder: Coordinator, waiter: Coordinator, chat: string, queue: (chat: string) => RedisKey, waitMs?: number) {
    const first = await holder.acquireTurn(chat)
    const waiting = waiter.acquireTurn(chat, waitMs === undefined ? {} : { waitMs })
    await until(async () => expect(await client.zcard(queue(chat))).toBe(1), 5000, 'the waiter queued')
    return { first, waiting }
  }

  it('a short turn offered to a waiter is held and released with no take-up poll; its release names it the last holder', async () => {
    const { a, b, c, state, queue } = await setup()
    const { first, waiting } = await queueBehind(a, b, 'chat:short', queue)
    await first.release()
    const turn = await waiting
    expect(turn.previousHolder?.replicaId).toBe('a')
    // Held as Redis offered it: no poll took it up (a take-up writes '0' and makes b the last holder).
    expect(await client.hmget(state('chat:short'), 'h', 'of', 'lh')).toEqual(['b', '1', 'a'])
    expect(turn.held).toBe(true)
    await turn.release()
    expect(await client.hget(state('chat:short'), 'lh')).toBe('b')
    const next = await c.acquireTurn('chat:short')
    expect(next.previousHolder?.replicaId).toBe('b')
    await next.release()
  })

  it('a turn used at once survives a freeze of half a lease right after its grant, as any lease does', async () => {
    const { a, b, c, state, queue } = await setup()
    const { first, waiting } = await queueBehind(a, b, 'chat:frozen', queue)
    await first.release()
    const turn = await waiting
    expect(await client.hget(state('chat:frozen'), 'of')).toBe('1') // used at once, not taken up yet
    // The whole process freezes for half the lease (750 ms of 1,500): no timer runs, no reply is read.
    const thawAt = performance.now() + 750
    while (performance.now() < thawAt) {
      // frozen
    }
    // Its timers then run late: the watchdog finds the lease still within its deadline, and the
    // take-up renewal goes (it was due a third of a lease after the take that bounds the offer).
    await until(async () => expect(turn.held).toBe(true), 1000, 'the take-up renewal confirmed the turn')
    expect(turn.signal.aborted).toBe(false)
    expect(await client.hmget(state('chat:frozen'), 'h', 'of')).toEqual(['b', '0'])
    await expect(c.acquireTurn('chat:frozen', { waitMs: 300 })).rejects.toMatchObject({ reason: 'timeout' })
    await turn.release()
  })

  it('a turn held past a third of the lease is taken up by a renewal when one was due: still held, nobody else granted', async () => {
    const { a, b, c, state, queue } = await setup()
    const { first, waiting } = await queueBehind(a, b, 'chat:long', queue)
    await first.release()
    const turn = await waiting
    await sleep(900) // a renewal was due a third of the lease (500 ms) after the take that bounds the offer
    expect(turn.held).toBe(true)
    expect(await client.hmget(state('chat:long'), 'h', 'of', 'lh')).toEqual(['b', '0', 'b'])
    await expect(c.acquireTurn('chat:long', { waitMs: 300 })).rejects.toMatchObject({ reason: 'timeout' })
    await turn.release()
    const next = await c.acquireTurn('chat:long')
    expect(next.previousHolder?.replicaId).toBe('b')
    await next.release()
  })

  it('a push of another take of the same ticket number is not used: the waiter polls, and waits on', async () => {
    const { a, b, keys, state, queue } = await setup()
    const { first, waiting: queued } = await queueBehind(a, b, 'chat:stale', queue, 10_000)
    let settled = false
    const waiting = queued.finally(() => (settled = true))
    const [ticket] = await client.zrange(queue('chat:stale'), '0', '0')
    const [requestId, value] = await client.hmget(state('chat:stale'), `q:${ticket}`, `t:${ticket}`)
    expect(requestId).toBeTruthy()
    const enqueued = Number(value!.split('|')[1])
    // The push a grant of b's ticket number and request would send, made just now, but of a take
    // before the one that queued it (as if the chat's state was lost since and the ticket taken again).
    const push = {
      t: ticket,
      q: requestId,
      f: '99',
      l: 500,
      k: state('chat:stale'),
      p: 'a',
      pi: a.incarnation,
      g: String(Date.now() * 1000 + 500_000),
      e: String(enqueued - 1),
    }
    expect(await client.publish(keys.wakeChannel(b.incarnation), JSON.stringify(push))).toBe(1)
    await sleep(400)
    expect(settled).toBe(false)
    expect(await client.hmget(state('chat:stale'), 'h', 'of')).toEqual(['a', '0'])
    await first.release()
    const turn = await waiting
    expect(turn.fence).not.toBe(99)
    expect(await client.hget(state('chat:stale'), 'h')).toBe('b')
    await turn.release()
  })
})
