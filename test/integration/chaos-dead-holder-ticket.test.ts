/**
 * Found by the fault campaign (chaos/, fault `kill-after-send`, run seed 2715883072): a replica that
 * dies while holding a chat's turn AND having a second message of that chat queued stalls the chat
 * for up to 2 × leaseMs instead of leaseMs.
 *
 * Its turn's lease runs out (last renewal + leaseMs: between ⅔ and 1 × leaseMs after the death) while
 * its queued ticket, refreshed by every poll until the death, is still "live" (deadline: last poll +
 * leaseMs ≈ death + leaseMs). The next grant therefore goes to the dead replica's own ticket, which
 * nobody will ever confirm, and the waiters behind it wait a second whole lease.
 *
 * Expected (the seed): after a holder dies, the chat moves on within leaseMs plus one poll.
 * Failed on f868ff7 (3.7 s with leaseMs 2 s); fixed by 942fcaf (a holder whose lease ran out unrenewed
 * is presumed dead, and so are its own tickets queued behind it).
 *
 * Checked on the state, not with a stopwatch: the dead holder's own queued ticket is skipped with it
 * (counted in the chat's `sk`), never granted — granting it is what cost the second lease.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { queueView, untilQueued } from '../helpers/shared-state.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a holder that dies with a ticket of the same chat queued (found by the fault campaign)', () => {
  it('lets the chat move on within leaseMs plus one poll', async () => {
    const leaseMs = 2000
    const prefix = uniquePrefix('dead')
    const dying = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'dying', leaseMs, maxPollMs: 20 })
    const healthy = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'healthy', leaseMs })
    cleanup.push(() => healthy.stop())
    cleanup.push(() => dying.stop())
    await Promise.all([dying.start(), healthy.start()])

    await dying.acquireTurn('chat:1') // it holds the chat…
    const second = dying.acquireTurn('chat:1', { waitMs: 30_000 }).catch(() => null) // …and queued its next message
    await untilQueued(healthy, 'chat:1', ['dying'])
    const waiting = healthy.acquireTurn('chat:1', { waitMs: 20_000 }) // a healthy replica waits behind both
    await untilQueued(healthy, 'chat:1', ['dying', 'healthy'])
    dying.crash() // SIGKILL: no release, no renewal, no poll any more
    await second
    const turn = await waiting
    expect(await queueView(healthy, 'chat:1')).toEqual({ holder: 'healthy', queued: [], skipped: 1 })
    expect(turn.previousHolder?.replicaId).toBe('dying')
    await turn.release()
  }, 30_000)
})
