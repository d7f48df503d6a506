/**
 * Listings read each SCAN batch with read-listing-0 calls on the node that answered the SCAN (not
 * commands per key), on a standalone Redis and on every master of a cluster — what they show of each
 * key, bounded: a long queue's head and its length.
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
    it('one call per SCAN batch reads what a listing shows of each hash, a value with a NUL in it and a key of another type too', async () => {
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
      // Per master: SCANs and one read-listing-0 per batch, plus the pipelined read of the key with a NUL.
      const masters = layout === 'cluster' ? 3 : 1
      expect(reader.commands).toBeLessThanOrEqual(masters * 6 + 2)
    })

    it("a listing of several kinds is sent only those kinds' keys: checkpoints, queues and replicas stay in Redis", async () => {
      const redis = layout === 'cluster' ? new Cluster([hostPort(clusterUrl())]) : new Redis(redisUrl())
      clients.push(redis)
      const keys = new KeyLayout(uniquePrefix('lk'), layout)
      expect(keys.scanPatternOf(['chat', 'lead', 'lock'])).toBe(`${keys.prefix}:[clk]:*`)
      expect(keys.scanPatternOf(['chat'])).toBe(`${keys.prefix}:c:*`)
      expect(keys.scanPatternOf(['chat', 'checkpoint'])).toBe(`${keys.prefix}:[c][:p]*`) // 'cp': not one letter; the caller keeps its kinds
      for (let i = 0; i < 20; i++) {
        const k = keys.chat(`c:[${i}]*`) // glob characters in an id are the id's own
        await redis.hset(k.state, 'n', '1', 'f', String(i), 'lh', 'r', 'lhi', 'inc')
        await redis.zadd(k.queue, 2, '2')
        await redis.hset(k.checkpoint, 'rev', '1')
        await redis.hset(keys.replica(`r${i}`), 'inc', 'x')
      }
      await redis.hset(keys.lead('provider:wa'), 'h', 'r', 'hi', 'inc', 'f', '1', 'exp', '1')
      await redis.hset(keys.lock('job'), 'o', 'vm:1', 'f', '1', 'exp', '1')
      const reader = new StateReader(redis, keys)
      const out = await reader.listMany({ chat: LISTING_DECODERS.chat, lead: LISTING_DECODERS.lead, lock: LISTING_DECODERS.lock })
      expect(out.chat.items).toHaveLength(20)
      expect([out.lead.items.length, out.lock.items.length]).toEqual([1, 1])
      // SCAN returned the 22 keys listed, not the 60 checkpoints, queues and heartbeats beside them.
      expect(out.chat.scanned).toBe(22)
      // With the markers too (doctor's walk; 'ho' is two letters): still not the checkpoints ('cp').
      await redis.hset(keys.chat('c:[3]*').handover, 'st', 'x')
      expect(keys.scanPatternOf(['chat', 'lead', 'lock', 'handover'])).toBe(`${keys.prefix}:[clkh][:o]*`)
      const walk = await reader.listMany({
        chat: LISTING_DECODERS.chat,
        lead: LISTING_DECODERS.lead,
        lock: LISTING_DECODERS.lock,
        handover: LISTING_DECODERS.handover,
      })
      expect(walk.chat.items).toHaveLength(20)
      expect(walk.handover.items.length + walk.handover.corrupt.length).toBe(1)
      expect(walk.chat.scanned).toBe(23)
    })

    it('a listing reads the head of a long queue and its length; a scan for an intervention reads every ticket', async () => {
      const redis = layout === 'cluster' ? new Cluster([hostPort(clusterUrl())]) : new Redis(redisUrl())
      clients.push(redis)
      const keys = new KeyLayout(uniquePrefix('lq'), layout)
      const k = keys.chat('chat:long')
      const now = Date.now()
      const fields: Record<string, string> = { n: '41', f: '7', h: 'r', hi: 'inc-h', ht: '1', exp: String(now + 60_000) }
      for (let t = 2; t <= 41; t++) fields[`t:${t}`] = `${now + 60_000}|${now}|${t === 40 ? 'inc-z' : 'inc-w'}|${t === 40 ? 'z' : 'w'}`
      await redis.hset(k.state, fields)
      await redis.zadd(k.queue, ...Array.from({ length: 40 }, (_, i) => [i + 2, String(i + 2)]).flat())
      const reader = new StateReader(redis, keys)
      const { chat } = await reader.listMany({ chat: LISTING_DECODERS.chat })
      expect(chat.items[0]).toMatchObject({ queued: 40 })
      expect(chat.items[0]!.tickets.map((t) => t.ticket)).toEqual(Array.from({ length: 16 }, (_, i) => i + 2))
      // What replica evict walks: the chat whole, so the ticket of inc-z at place 39 is found.
      const seen: string[] = []
      for await (const batch of reader.scanKinds(['chat'], { whole: ['chat'] })) for (const it of batch) seen.push(...Object.keys(it.hash))
      expect(seen).toContain('t:40')
      const detail = await reader.chat('chat:long', { tickets: 3, ticket: 40 })
      expect(detail.chat!.tickets.map((t) => t.ticket)).toEqual([2, 3, 4, 40])
      expect(detail.chat!.queued).toBe(40)
    })
  })
}
