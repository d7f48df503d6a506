import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

describe('turn scripts', () => {
  it('taking a ticket is idempotent per request id: a retry after a lost reply keeps its place', async () => {
    const keys = new KeyLayout(uniquePrefix('ts'), 'standalone')
    const k = keys.chat('chat:retry')
    const scripts = new ScriptRunner(client, 5000)
    const acquire = (inc: string, ticket: string, req: string, retry = '') =>
      scripts.run<Array<string | number | null>>(
        'turn-acquire-2',
        [k.state, k.queue],
        ['r', inc, 5000, 60000, ticket, keys.wakeChannelPrefix, req, retry],
      )
    const holder = await acquire('i1', '', 'i1:1')
    expect(holder[0]).toBe(1)
    const first = await acquire('i2', '', 'i2:1') // queued as ticket 2; pretend the reply was lost
    expect(first.slice(0, 2)).toEqual([0, '2'])
    const retry = await acquire('i2', '', 'i2:1', '1') // the retry finds ticket 2 again
    expect(retry.slice(0, 2)).toEqual([0, '2'])
    const later = await acquire('i2', '', 'i2:2') // a later message of the same replica queues behind it
    expect(later.slice(0, 2)).toEqual([0, '3'])
    expect(await client.zrange(k.queue, '0', '-1')).toEqual(['2', '3'])
    await acquire('i2', '2', 'i2:1') // a poll with the known ticket drops the request-id field
    expect(await client.hexists(k.state, 'rq:i2:1')).toBe(0)
    const released = await scripts.run('turn-release-2', [k.state, k.queue], ['i1', '1', 5000, 60000, keys.wakeChannelPrefix, 'i1:1'])
    expect(released).toBe(1)
    expect(await client.hexists(k.state, 'rq:i1:1')).toBe(0)
    expect(await client.hget(k.state, 'ht')).toBe('2') // the retried ticket was granted first
  })
})
