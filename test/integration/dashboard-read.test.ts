import { afterEach, describe, expect, it } from 'vitest'
import { RedisStore, StateReader, readDashboard, type Layout } from '../../src/index.js'
import { clusterUrl, redisUrl, uniquePrefix } from '../helpers/redis.js'
import { sleep, until } from '../helpers/wait.js'
import { untilBeatListsWaiting, untilQueued, untilStanding } from '../helpers/shared-state.js'

describe.each([
  ['standalone', redisUrl],
  ['cluster', clusterUrl],
] as Array<[Layout, () => string]>)('readDashboard on %s', (layout, url) => {
  const stores: RedisStore[] = []
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close()
  })
  /** Another replica's store on the same prefix (a store has one coordinator). */
  const replicaStore = (of: RedisStore) => {
    const s = new RedisStore({ url: url(), prefix: of.keys.prefix, layout })
    stores.push(s)
    return s
  }

  it('shows live replicas, held and queued chats, the provider leader, and stays bounded', async () => {
    const store = new RedisStore({ url: url(), prefix: uniquePrefix('dash'), layout })
    stores.push(store)
    const a = store.coordinator({ replicaId: 'a', leaseMs: 3000 })
    const b = replicaStore(store).coordinator({ replicaId: 'b', leaseMs: 3000 })
    await a.start()
    await b.start()
    try {
      const held = await a.acquireTurn('chat:busy')
      const waiting = b.acquireTurn('chat:busy')
      const e = a.campaign('provider:wa')
      await until(() => e.isLeader, 5000, 'a leading provider:wa')
      b.campaign('provider:wa')
      await untilStanding(store, 'provider:wa', ['b'])
      await untilQueued(store, 'chat:busy', ['b'])
      // Many idle chats must not change the cost of a refresh.
      for (let i = 0; i < 200; i++) await (await b.acquireTurn(`chat:idle:${i}`)).release()
      await a.renewNow()
      await untilBeatListsWaiting(b, ['chat:busy'])
      const reader = new StateReader(store.redis, store.keys)
      const snap = await readDashboard(reader)
      expect(snap.replicas.map((r) => r.replicaId)).toEqual(['a', 'b'])
      expect(snap.providers).toHaveLength(1)
      expect(snap.providers[0]).toMatchObject({ key: 'provider:wa', holder: { replicaId: 'a' } })
      expect(snap.providers[0]!.candidates.map((c) => c.replicaId)).toEqual(['b'])
      const busy = snap.chats.find((c) => c.chat.key === 'chat:busy')!
      expect(busy).toMatchObject({ queueLength: 1, stuck: [] })
      expect(busy.chat.holder).toMatchObject({ replicaId: 'a' })
      expect(snap.chats[0]!.chat.key).toBe('chat:busy') // the busiest first
      expect(snap.expiring.map((x) => x.key)).toEqual(expect.arrayContaining(['chat:busy', 'provider:wa']))
      expect(snap.events.length).toBeGreaterThan(0)
      expect(snap.commands).toBeLessThan(20)
      await held.release()
      await (await waiting).release()
    } finally {
      await a.stop()
      await b.stop()
    }
  })

  it('puts a chat held long with others waiting first, as stuck', async () => {
    const store = new RedisStore({ url: url(), prefix: uniquePrefix('dash'), layout })
    stores.push(store)
    const a = store.coordinator({ replicaId: 'a', leaseMs: 3000 })
    const b = replicaStore(store).coordinator({ replicaId: 'b', leaseMs: 3000 })
    await a.start()
    await b.start()
    try {
      const quick = await a.acquireTurn('chat:quick')
      const long = await a.acquireTurn('chat:long')
      const w1 = b.acquireTurn('chat:long')
      const w2 = b.acquireTurn('chat:quick')
      await untilBeatListsWaiting(b, ['chat:long', 'chat:quick'])
      await sleep(300) // time is the subject: both chats held longer than half of turnWaitMs (500)
      await a.renewNow()
      const snap = await readDashboard(new StateReader(store.redis, store.keys), { turnWaitMs: 500 })
      expect(snap.chats.map((c) => c.chat.key).sort()).toEqual(['chat:long', 'chat:quick'])
      expect(snap.chats[0]!.health.findings.map((f) => f.code)).toEqual(['holder-slow'])
      expect(snap.chats[0]!.stuck[0]).toMatch(/^a has held the turn for .* while 1 message\(s\) wait/)
      await quick.release()
      await long.release()
      await (await w1).release()
      await (await w2).release()
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})
