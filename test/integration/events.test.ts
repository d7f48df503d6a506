import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoordinationAdmin, RedisStore, decodeReplica } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { blockEventLoop, until } from '../helpers/wait.js'

const open: Array<{ close?: () => Promise<unknown>; quit?: () => Promise<unknown> }> = []
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await (o.close?.() ?? o.quit?.())?.catch(() => {})
})

async function readEvents(client: Redis, key: string): Promise<Array<Record<string, unknown>>> {
  const entries = await client.xrange(key, '-', '+')
  return entries.map(([, fields]) => JSON.parse(fields[1]!) as Record<string, unknown>)
}

describe('event stream and heartbeat record', () => {
  it('records replica start/stop, leader changes, yields, lease losses and handovers — not one entry per message', async () => {
    const prefix = uniquePrefix('events')
    const store = new RedisStore({ url: redisUrl(), prefix })
    const client = new Redis(redisUrl())
    open.push(client, store)
    const a = store.coordinator({ replicaId: 'a', leaseMs: 900 })
    await a.start()
    for (let i = 0; i < 20; i++) await (await a.acquireTurn(`chat:${i % 3}`)).release()
    const election = a.campaign('provider:wa', { sitOutMs: 100 })
    await until(() => election.isLeader, 5000, 'a leading provider:wa')
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix })
    open.push(admin)
    expect((await admin.requestYield('provider:wa', { by: 'ops@host' })).status).toBe('requested')
    await until(() => !election.isLeader, 5000, 'a yielding provider:wa')
    await until(() => election.isLeader, 5000, 'a leading again') // alone: it stands again after sitting out
    a.reportHandover({ key: 'chat:1', name: 'order', outcome: 'resumed', from: 'b' })
    const lead = await a.tryLead('job:x')
    const lost: string[] = []
    a.on('coordination:lease-lost', (e: { key: string }) => lost.push(e.key))
    blockEventLoop(1000) // freeze past the lease: job:x and provider:wa are lost
    expect(lead!.held).toBe(false)
    await until(() => lost.includes('job:x'), 5000, 'the loss of job:x noticed (and recorded)')
    await a.stop()
    const events = await until(
      async () => {
        const all = await readEvents(client, `${prefix}:events`)
        return all.at(-1)?.type === 'replica-stop' && all
      },
      5000,
      'the replica-stop event in the stream',
    )
    const types = events.map((e) => e.type)
    expect(types[0]).toBe('replica-start')
    expect(types.at(-1)).toBe('replica-stop')
    expect(types.filter((t) => t === 'leader').length).toBeGreaterThanOrEqual(2)
    expect(events).toContainEqual(expect.objectContaining({ type: 'follower', name: 'provider:wa', reason: 'yield' }))
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'handover', key: 'chat:1', name: 'order', outcome: 'resumed', replicaId: 'a' }),
    )
    expect(events).toContainEqual(expect.objectContaining({ type: 'lease-lost', key: 'job:x', kind: 'lead', reason: 'expired' }))
    expect(events.every((e) => typeof e.at === 'number' && e.incarnation === a.incarnation)).toBe(true)
    expect(events.length).toBeLessThan(20) // 20 turns did not write 20 entries
  })

  it('the heartbeat record carries host, pid, version, leases held and counters', async () => {
    const prefix = uniquePrefix('beat')
    const store = new RedisStore({ url: redisUrl(), prefix })
    open.push(store)
    const a = store.coordinator({ replicaId: 'pod-a', leaseMs: 3000, meta: { version: '9.9.9' } })
    await a.start()
    const t = await a.acquireTurn('chat:held')
    for (let i = 0; i < 5; i++) await (await a.acquireTurn('chat:other')).release()
    const lead = await a.tryLead('provider:wa')
    const before = Date.now()
    await a.renewNow()
    const rawKey = store.keys.replica('pod-a')
    const rec = decodeReplica('pod-a', rawKey, await store.redis.hgetall(rawKey))
    const after = Date.now()
    expect(rec.incarnation).toBe(a.incarnation)
    expect(rec.info).toMatchObject({ pid: process.pid, version: '9.9.9', leaseMs: 3000, host: expect.any(String) })
    expect(rec.stats).toMatchObject({ turnsGranted: 6, waitingNow: 0, leasesLost: 0, turnsHeld: 1, leadsHeld: 1 })
    expect(rec.stats.waitP99Ms).toEqual(expect.any(Number))
    expect(rec.leases.held).toEqual(
      expect.arrayContaining([
        { kind: 'chat', key: 'chat:held', fence: t.fence },
        { kind: 'lead', key: 'provider:wa', fence: lead!.fence },
      ]),
    )
    // One machine, one wall clock: the replica's clock and Redis's TIME at that beat both fell between
    // `before` and `after`, so the skew it records is at most that span (ms rounding aside).
    expect(Math.abs(rec.clockSkewMs!)).toBeLessThanOrEqual(after - before + 1)
    expect(rec.expiresAtMs - rec.beatAtMs).toBe(3000)
    await t.release()
    await a.stop()
  })
})
