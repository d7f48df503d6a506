import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { TURN_ACQUIRE, TURN_RELEASE } from '../../src/scripts/registry.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

describe('turn scripts', () => {
  it('taking a ticket is idempotent per request id: a retry after a lost reply keeps its place', async () => {
    const keys = new KeyLayout(uniquePrefix('ts'), 'standalone')
    const k = keys.chat('chat:retry')
    const scripts = new ScriptRunner(client, 5000)
    const acquire = (incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(
        TURN_ACQUIRE,
        { state: k.state, queue: k.queue },
        { replicaId: 'r', incarnation, leaseMs: 5000, idleTtlMs: 60000, ticket, wakeChannelPrefix: keys.wakeChannelPrefix, requestId },
      )
    const holder = await acquire('i1', null, 'i1:1')
    expect(holder.status).toBe('granted')
    const first = await acquire('i2', null, 'i2:1') // queued as ticket 2; pretend the reply was lost
    expect(first).toEqual({ status: 'queued', ticket: 2 })
    const retry = await acquire('i2', null, 'i2:1') // the retry (same request id) finds ticket 2 again
    expect(retry).toEqual({ status: 'queued', ticket: 2 })
    const later = await acquire('i2', null, 'i2:2') // a later message of the same replica queues behind it
    expect(later).toEqual({ status: 'queued', ticket: 3 })
    expect(await client.zrange(k.queue, '0', '-1')).toEqual(['2', '3'])
    await acquire('i2', 2, 'i2:1') // a poll with the known ticket drops the request-id field
    expect(await client.hexists(k.state, 'rq:i2:1')).toBe(0)
    const released = await scripts.call(
      TURN_RELEASE,
      { state: k.state, queue: k.queue },
      { incarnation: 'i1', ticket: 1, leaseMs: 5000, idleTtlMs: 60000, wakeChannelPrefix: keys.wakeChannelPrefix, requestId: 'i1:1' },
    )
    expect(released).toBe('released')
    expect(await client.hexists(k.state, 'rq:i1:1')).toBe(0)
    expect(await client.hget(k.state, 'ht')).toBe('2') // the retried ticket was granted first
  })
})
