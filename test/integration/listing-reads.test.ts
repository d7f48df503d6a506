/**
 * Listings read each SCAN batch's hashes with one read-hashes-0 call on the node that answered the
 * SCAN (not one HGETALL per key), on a standalone Redis and on every master of a cluster.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Cluster, Redis } from 'ioredis'
import { KeyLayout, type Layout } from '../../src/keys.js'
import { LISTING_DECODERS, StateReader } from '../../src/state/reader.js'
import { clusterUrl, hostPort, redisUrl, uniquePrefix } from '../helpers/redis.js'

const clients: Array<Redis | Cluster> = []
afterAll(() => Promise.all(clients.map((c) => c.quit())))

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`listing reads (${layout})`, () => {
    it('one call per SCAN batch reads every hash whole, a value with a NUL in it and a key of another type too', async () => {
      const redis = layout === 'cluster' ? new Cluster([hostPort(clusterUrl())]) : new Redis(redisUrl())
      clients.push(redis)
      const keys = new KeyLayout(uniquePrefix('lr'), layout)
      const n = 60
      for (let i = 0; i < n; i++) {
        await redis.hset(keys.chat(`chat:${i}`).state, 'n', '1', 'f', String(1000 + i), 'lh', `r-${i}`, 'lhi', 'inc')
      }
      await redis.hset(keys.chat('chat:nul').state, 'n', '1', 'f', '7', 'lh', 'a\u0000b', 'lhi', 'inc')
      await redis.set(keys.chat('chat:string').state, 'x')
      const reader = new StateReader(redis, keys)
      const { chat } = await reader.listMany({ chat: LISTING_DECODERS.chat }, { count: 1000 })
      expect(chat.items).toHaveLength(n + 1)
      expect(chat.items.find((c) => c.key === 'chat:nul')?.lastHolder).toEqual({ replicaId: 'a\u0000b', incarnation: 'inc' })
      expect(chat.items.find((c) => c.key === 'chat:7')).toMatchObject({
        fence: 1007,
        lastHolder: { replicaId: 'r-7', incarnation: 'inc' },
      })
      expect(chat.corrupt).toEqual([{ rawKey: keys.chat('chat:string').state, error: 'wrong Redis type' }])
      // Per master: SCANs and one read-hashes-0 per batch, plus one HGETALL for the key with a NUL.
      const masters = layout === 'cluster' ? 3 : 1
      expect(reader.commands).toBeLessThanOrEqual(masters * 6 + 2)
    })
  })
}
