/**
 * Operator interventions (CoordinationAdmin) against live replicas made by the library, on Redis
 * standalone and on a 3-master Redis Cluster: each one does what it says, fences only grow, the old
 * holder learns it lost, a stale condition changes nothing, and every intervention is audited.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import {
  CheckpointConflictError,
  CoordinationAdmin,
  CoordinationUnavailableError,
  LeaseLostError,
  RedisCoordinator,
  RedisStore,
  type Layout,
} from '../../src/index.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import { untilBeatListsWaiting, untilQueued, untilStanding } from '../helpers/shared-state.js'

const LEASE = 1500
/** The zombie's lease: it must still hold what its heartbeat listed when the operator evicts it, on a loaded machine. */
const ZOMBIE_LEASE = 6000

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`CoordinationAdmin interventions (${layout})`, () => {
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const closers: Array<() => Promise<unknown>> = []
    afterEach(async () => {
      for (const c of closers.splice(0).reverse()) await c().catch(() => {})
    })
    const setup = () => {
      const prefix = uniquePrefix('admin')
      const admin = new CoordinationAdmin({ url: url(), prefix, layout })
      closers.push(() => admin.close())
      const replica = async (replicaId: string, leaseMs = LEASE) => {
        const c = await startCoordinator(() => new RedisCoordinator({ url: url(), prefix, layout, replicaId, leaseMs, maxPollMs: 50 }))
        closers.push(() => c.stop())
        return c
      }
      const store = () => {
        const s = new RedisStore({ url: url(), prefix, layout })
        closers.push(() => s.close())
        return s
      }
      const events = async () => {
        const entries = await admin.redis.xrange(`${prefix}:events`, '-', '+')
        return entries.map(([, f]) => JSON.parse(f[1]!) as Record<string, unknown>).filter((e) => e.type === 'intervention')
      }
      return { prefix, admin, replica, store, events }
    }

    it('chat release: a stale fence changes nothing; then the holder is revoked, the waiter gets the chat, the old holder is fenced out', async () => {
      const { admin, replica, store, events } = setup()
      const a = await replica('a')
      const b = await replica('b')
      const turnA = await a.acquireTurn('chat:1')
      const waiting = b.acquireTurn('chat:1', { waitMs: 10_000 })
      await untilQueued(admin, 'chat:1', ['b'])

      const stale = await admin.releaseChat('chat:1', { ifFence: turnA.fence - 1, ifIncarnation: a.incarnation, reason: 'test' })
      expect(stale.status).toBe('changed')
      await a.renewNow()
      expect(turnA.held).toBe(true)

      const r = await admin.releaseChat('chat:1', { ifFence: turnA.fence, ifIncarnation: a.incarnation, reason: 'stuck', by: 'ops@test' })
      expect(r.status).toBe('released')
      if (r.status !== 'released') return
      expect(r.holder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
      expect(r.fenceAfter).toBeGreaterThan(turnA.fence)
      const turnB = await waiting
      expect(turnB.fence).toBeGreaterThan(r.fenceAfter)
      expect(r.granted?.replicaId).toBe('b')
      expect(turnB.previousHolder?.replicaId).toBe('a')

      await a.renewNow()
      expect(() => turnA.assertHeld()).toThrow(LeaseLostError)
      expect(turnA.signal.aborted).toBe(true)
      const s = store()
      await expect(
        s.setCheckpointIf(
          'chat:1',
          { flow: 'f', step: 's', state: {}, owner: { replicaId: 'a', incarnation: a.incarnation, fence: turnA.fence } },
          null,
        ),
      ).rejects.toBeInstanceOf(CheckpointConflictError)

      const audit = await events()
      expect(audit).toContainEqual(
        expect.objectContaining({
          type: 'intervention',
          by: 'ops@test',
          command: 'chat release chat:1',
          key: 'chat:1',
          fenceBefore: turnA.fence,
          reason: 'stuck',
          result: 'released',
        }),
      )
      expect(audit.find((e) => e.result === 'released')!.fenceAfter).toBe(turnB.fence)
      expect(audit.find((e) => e.result === 'changed')).toBeTruthy()
      await turnB.release()
    })

    it('chat skip drops one ticket: its acquireTurn rejects with reason dropped; the others keep their place', async () => {
      const { admin, replica } = setup()
      const a = await replica('a')
      const b = await replica('b')
      const turnA = await a.acquireTurn('chat:2')
      const dropped = b.acquireTurn('chat:2', { waitMs: 10_000 }).catch((e: unknown) => e)
      await untilQueued(admin, 'chat:2', ['b'])
      const ticket = turnA.ticket + 1
      const wrong = await admin.skipTicket('chat:2', ticket, { ifIncarnation: 'someone-else' })
      expect(wrong.status).toBe('changed')
      const held = await admin.skipTicket('chat:2', turnA.ticket, {})
      expect(held.status).toBe('holds-turn')
      const r = await admin.skipTicket('chat:2', ticket, { ifIncarnation: b.incarnation })
      expect(r.status).toBe('skipped')
      const err = await dropped
      expect(err).toBeInstanceOf(CoordinationUnavailableError)
      expect((err as CoordinationUnavailableError).reason).toBe('dropped')
      expect(turnA.held).toBe(true)
      await turnA.release()
    })

    it('lead revoke (yield --force): fence bumped, a standby leads with a higher fence, the old leader loses it', async () => {
      const { admin, replica } = setup()
      const a = await replica('a')
      const b = await replica('b')
      const ea = a.campaign('provider:wa', { sitOutMs: 5000 })
      await until(() => ea.isLeader, 5000, 'a leads')
      const eb = b.campaign('provider:wa', { sitOutMs: 5000 })
      const fenceA = ea.fence!
      await untilStanding(admin, 'provider:wa', ['b'])
      const stale = await admin.revokeLead('provider:wa', { ifFence: fenceA + 1 })
      expect(stale.status).toBe('changed')
      const r = await admin.revokeLead('provider:wa', { ifFence: fenceA, ifIncarnation: a.incarnation, reason: 'frozen' })
      expect(r.status).toBe('revoked')
      await until(() => eb.isLeader, 5000, 'b leads')
      expect(eb.fence!).toBeGreaterThan(r.status === 'revoked' ? r.fenceAfter : 0)
      await until(() => !ea.isLeader, 5000, 'a lost it')
    })

    it('lock release: the holder cannot renew, the next holder gets a higher fence', async () => {
      const { admin } = setup()
      const s = new RedisStore({ url: url(), prefix: admin.keys.prefix, layout })
      closers.push(() => s.close())
      const lock = (await s.acquireLockFenced('invoice:run', 30_000))!
      expect((await admin.releaseLock('invoice:run', { ifFence: lock.fence + 5 })).status).toBe('changed')
      expect(await s.renewLock('invoice:run', lock.token, 30_000)).toBe(true)
      const r = await admin.releaseLock('invoice:run', { ifFence: lock.fence })
      expect(r.status).toBe('released')
      expect(await s.renewLock('invoice:run', lock.token, 30_000)).toBe(false)
      const next = (await s.acquireLockFenced('invoice:run', 30_000))!
      expect(next.fence).toBeGreaterThan(r.status === 'released' ? r.fenceAfter : Infinity)
    })

    it('checkpoint rm is compare-and-set on the revision', async () => {
      const { admin } = setup()
      const s = new RedisStore({ url: url(), prefix: admin.keys.prefix, layout })
      closers.push(() => s.close())
      const rev = await s.setCheckpointIf('chat:9', { flow: 'order', step: 'address', state: { n: 1 } }, null)
      expect((await admin.removeCheckpoint('chat:9', rev - 1)).status).toBe('changed')
      expect(await s.getCheckpoint('chat:9')).not.toBeNull()
      expect((await admin.removeCheckpoint('chat:9', rev)).status).toBe('removed')
      expect(await s.getCheckpoint('chat:9')).toBeNull()
      expect((await admin.removeCheckpoint('chat:9', rev)).status).toBe('absent')
    })

    it('replica evict: the zombie emits coordination:evicted, loses its turn and tickets, the waiters get the chats', async () => {
      const { admin, replica, events } = setup()
      const a = await replica('a', ZOMBIE_LEASE)
      const b = await replica('b', ZOMBIE_LEASE)
      let evicted = false
      a.on('coordination:evicted', () => (evicted = true))
      const turnA = await a.acquireTurn('chat:10')
      const turnB = await b.acquireTurn('chat:11')
      const bWaits = b.acquireTurn('chat:10', { waitMs: 10_000 })
      const aWaits = a.acquireTurn('chat:11', { waitMs: 10_000 }).catch((e: unknown) => e)
      await untilQueued(admin, 'chat:10', ['b'])
      await untilBeatListsWaiting(a, ['chat:11']) // the heartbeat lists what a holds and waits for

      expect((await admin.evictReplica('a', { ifIncarnation: 'not-it' })).status).toBe('changed')
      const r = await admin.evictReplica('a', { ifIncarnation: a.incarnation, reason: 'zombie' })
      expect(r.status).toBe('evicted')
      if (r.status !== 'evicted') return
      expect(r.chats.find((c) => c.key === 'chat:10')).toMatchObject({ revoked: true })
      expect(r.chats.find((c) => c.key === 'chat:11')).toMatchObject({ revoked: false, ticketsDropped: 1 })
      const got = await bWaits
      expect(got.fence).toBeGreaterThan(turnA.fence)
      expect(await aWaits).toBeInstanceOf(CoordinationUnavailableError)
      await until(() => evicted, ZOMBIE_LEASE, 'coordination:evicted (at its next beat)')
      expect(() => turnA.assertHeld()).toThrow(LeaseLostError)
      const state = await admin.redis.hgetall(admin.keys.chat('chat:11').state)
      expect(Object.keys(state).filter((f) => f.startsWith('t:'))).toEqual([])
      expect(await admin.redis.hget(admin.keys.replica('a'), 'ev')).toBe(a.incarnation)
      expect(await events()).toContainEqual(
        expect.objectContaining({ command: 'replica evict a', key: 'a', reason: 'zombie', result: 'evicted' }),
      )
      await got.release()
      await turnB.release()
    })
  })
}

describe('audit write failure', () => {
  it('a refused XADD does not hide the result of the intervention', async () => {
    const prefix = uniquePrefix('audit')
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix })
    const raw = new Redis(redisUrl())
    try {
      // The events key holds the wrong type: XADD fails, the release itself stands.
      await raw.set(`${prefix}:events`, 'not a stream')
      const s = new RedisStore({ url: redisUrl(), prefix })
      const lock = (await s.acquireLockFenced('k', 10_000))!
      const r = await admin.releaseLock('k', { ifFence: lock.fence })
      expect(r.status).toBe('released')
      expect(r.audit.written).toBe(false)
      expect(await s.renewLock('k', lock.token, 10_000)).toBe(false)
      await s.close()
    } finally {
      await raw.quit()
      await admin.close()
    }
  })
})
