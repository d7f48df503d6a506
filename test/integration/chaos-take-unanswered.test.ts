/**
 * Found by the fault campaign (chaos/, fault `net-cut-waiting`): a waiter that gives up while its
 * take-ticket is unanswered (sent, then the link was cut) does not know its ticket, so it withdrew
 * nothing. The client sends the take again once it reconnects, Redis queues a ticket nobody polls,
 * grants it in its turn, and the chat sits blocked for a lease behind a live replica — whose next
 * messages there are then dropped as a dead holder's.
 *
 * Expected: the withdrawal names the acquisition's request id, and finds the ticket it took.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CoordinationUnavailableError, KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { ChaosProxy } from '../../chaos/proxy.mjs'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'
import { sleep, until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a waiter that gives up while its take-ticket is unanswered (found by the fault campaign)', () => {
  it('withdraws the ticket the client sent again after reconnecting', async () => {
    const url = redisUrl()
    const prefix = uniquePrefix('take')
    const proxy = await new ChaosProxy(Number(new URL(url).port)).listen()
    cleanup.push(() => proxy.close())
    const reader = connect({ url, layout: 'standalone' })
    cleanup.push(async () => reader.disconnect())
    const on = { redis: reader, keys: new KeyLayout(prefix, 'standalone') }
    const b = await startCoordinator(() => new RedisCoordinator({ url, prefix, replicaId: 'b', leaseMs: 3000 }))
    cleanup.push(() => b.stop())
    const a = await startCoordinator(
      () => new RedisCoordinator({ url: `redis://127.0.0.1:${proxy.port}`, prefix, replicaId: 'a', leaseMs: 3000, maxPollMs: 50 }),
    )
    cleanup.push(() => a.stop())
    const held = await b.acquireTurn('chat:take')

    proxy.stall() // the take-ticket leaves the client, and is held on the way
    const abort = new AbortController()
    const wait = a.acquireTurn('chat:take', { signal: abort.signal }).catch((e: unknown) => e)
    await until(() => a.metrics.waitingNow === 1, 5000, 'the acquisition to start')
    await sleep(50) // time is the subject: the take is written to the socket (and held by the proxy)
    proxy.cut() // …and lost with the connection: the client will send it again
    abort.abort()
    const err = await wait
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).reason).toBe('aborted')
    proxy.restore()
    // The take arrives once the client reconnects; the withdrawal (retried) follows it and finds it.
    await until(() => (a.redis as { status: string }).status === 'ready', 10_000, "a's client to reconnect")
    await until(async () => (await queueView(on, 'chat:take')).queued.length === 0, 5000, 'no ticket of a left')
    await held.release()
    expect((await queueView(on, 'chat:take')).holder).toBeNull()
    const next = await a.acquireTurn('chat:take', { waitMs: 10_000 })
    expect(next.previousHolder?.replicaId).toBe('b')
    await next.release()
  })
})
