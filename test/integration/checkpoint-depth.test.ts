/**
 * The deepest checkpoint state the store accepts is one its readers read back: 63 levels of arrays
 * and objects (the stored record wraps it in one more, and a reader refuses past 64).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { InvalidCheckpointError, RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const nested = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v }
  return v
}

describe('checkpoint state depth on Redis', () => {
  const store = new RedisStore({ url: redisUrl(), prefix: uniquePrefix('depth') })
  afterAll(() => store.close())

  it('63 levels are written and read back; 5,000 are refused as invalid, before any write', async () => {
    await store.setCheckpointIf('chat:1', { flow: 'f', step: 's', state: nested(63) as never }, null)
    expect((await store.getCheckpoint('chat:1'))?.state).toEqual(nested(63))
    await expect(store.setCheckpointIf('chat:2', { flow: 'f', step: 's', state: nested(5000) as never }, null)).rejects.toBeInstanceOf(
      InvalidCheckpointError,
    )
    expect(await store.getCheckpoint('chat:2')).toBeNull()
  })
})
