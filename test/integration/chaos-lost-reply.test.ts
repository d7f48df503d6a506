/**
 * Found by the fault campaign (chaos/, fault `redis-restart-aof`, run seed 1204026589; caught by the
 * linearizability check of the checkpoint history): a compare-and-set checkpoint write whose reply is
 * lost when the connection drops is sent again by the client after it reconnects (ioredis
 * `autoResendUnfulfilledCommands`, on by default). The script runs a second time, finds the revision
 * its first run wrote, and the caller is told CheckpointConflictError ('superseded', revision
 * conflict) — with the current revision being its own write. The writer then ends the conversation as
 * a lost turn although its checkpoint is stored; a clear retried the same way answers false ("a newer
 * owner's row stays") although it deleted the row.
 *
 * Expected: a write that took effect is reported as written (or, when the client cannot know, as
 * unknown — CoordinationUnavailableError), never as refused.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { RedisStore, CheckpointConflictError } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import { replyEater } from '../helpers/proxies.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a checkpoint write whose reply was lost (found by the fault campaign)', () => {
  it('is not reported as refused when it took effect', async () => {
    const proxy = await replyEater(Number(new URL(redisUrl()).port))
    cleanup.push(() => proxy.close())
    const prefix = uniquePrefix('lostreply')
    const store = new RedisStore({ url: `redis://127.0.0.1:${proxy.port}`, prefix })
    cleanup.push(() => store.close())
    const observer = new RedisStore({ url: redisUrl(), prefix })
    cleanup.push(() => observer.close())

    const first = await store.setCheckpointIf('chat:1', { flow: 'f', step: 1, state: { n: 1 } }, null)
    proxy.eatReplies(true) // Redis runs the next write, its reply never arrives…
    const write = store.setCheckpointIf('chat:1', { flow: 'f', step: 2, state: { n: 2 } }, first)
    const stored = await until(
      async () => {
        const cp = await observer.getCheckpoint('chat:1')
        return cp?.revision !== first && cp
      },
      5000,
      'the write taking effect in Redis',
    )
    expect(stored?.step).toBe('2') // the write took effect
    proxy.eatReplies(false)
    proxy.dropAll() // …and the connection drops: the client reconnects and sends the write again
    const outcome = await write.then(
      (revision) => ({ revision }),
      (err: unknown) => ({ err }),
    )
    if ('err' in outcome && outcome.err instanceof CheckpointConflictError) {
      expect.fail(`the write took effect (revision ${stored?.revision}) but was reported refused: ${outcome.err.message}`)
    }
    if ('revision' in outcome) expect(outcome.revision).toBe(stored?.revision)
  }, 20_000)
})
