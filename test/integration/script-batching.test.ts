import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { batchWrites, TASK_BATCH } from '../../src/connection.js'
import { TURN_ACQUIRE } from '../../src/scripts/registry.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

/** Counts the socket's writes (a write or a writev is one system call). */
function countWrites(redis: Redis): { writes: number } {
  const counter = { writes: 0 }
  type Write = (...a: unknown[]) => void
  const stream = (redis as unknown as { stream: { _write: Write; _writev: Write } }).stream
  const write = stream._write.bind(stream)
  const writev = stream._writev.bind(stream)
  stream._write = (...a: unknown[]) => (counter.writes++, write(...a))
  stream._writev = (...a: unknown[]) => (counter.writes++, writev(...a))
  return counter
}

/** Takes a ticket in chat `chat:<i>` of a fresh prefix (a free chat: granted at once), one script call each. */
function taker() {
  const keys = new KeyLayout(uniquePrefix('sb'), 'standalone')
  const scripts = new ScriptRunner(client, 5000)
  return (i: number | string) => {
    const k = keys.chat(`chat:${i}`)
    return scripts.call(
      TURN_ACQUIRE,
      { state: k.state, queue: k.queue },
      {
        replicaId: 'r',
        incarnation: 'i1',
        leaseMs: 5000,
        idleTtlMs: 60000,
        ticket: null,
        wakeChannelPrefix: keys.wakeChannelPrefix,
        requestId: String(i),
      },
    )
  }
}

describe('script calls', () => {
  it('calls a caller sends together (corked: the renewal cycle) leave in one write, each answered on its own; a lone call is not held back', async () => {
    await client.ping()
    const take = taker()
    await take(100) // Redis knows the script from now on (EVALSHA, no EVAL after NOSCRIPT)
    const counter = countWrites(client)
    batchWrites(client)
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => take(i)))
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill('granted'))
    expect(counter.writes).toBe(1)
    // A lone call (a turn's take or release) goes out at once, in its own write.
    const later = await take('later')
    expect(later.status).toBe('granted')
    expect(counter.writes).toBe(2)
  })

  it('calls made in one task leave TASK_BATCH to a write, before the loop turns; a lone call in its own', async () => {
    await client.ping()
    const take = taker()
    await take(100)
    const counter = countWrites(client)
    const n = TASK_BATCH * 2 + 3
    const pending = Array.from({ length: n }, (_, i) => take(i))
    // Written by the end of this task's microtasks: nothing waits for the check phase.
    let writtenBeforeImmediate = -1
    setImmediate(() => (writtenBeforeImmediate = counter.writes))
    const replies = await Promise.all(pending)
    expect(replies.map((r) => r.status)).toEqual(Array(n).fill('granted'))
    expect(writtenBeforeImmediate).toBe(3)
    expect(counter.writes).toBe(3)
    // Continuations that send again (a reply's caller releasing, say) batch among themselves.
    const again = await Promise.all(pending.map((p, i) => p.then(() => take(`again-${i}`))))
    expect(again.every((r) => r.status === 'granted')).toBe(true)
    expect(counter.writes).toBe(6)
    const lone = await take('lone')
    expect(lone.status).toBe('granted')
    expect(counter.writes).toBe(7)
  })
})
