/**
 * Fences never repeat or go back, even from corrupt state: a fence field that is not a decimal integer
 * below 2^53 (2^53 + 1 would grant the same fence again, 1e300 a negative one) makes the granting
 * script refuse with `ERR botmesh corrupt fence at <key>` before it writes, and the library throws
 * CorruptStateError naming the key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoordinationAdmin, CorruptStateError, KeyLayout, RedisCoordinator, RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const CORRUPT = ['9007199254740993', '9007199254740991', '1e300', '-5', 'lots', '']

describe('a corrupt fence is refused before any write', () => {
  const prefix = uniquePrefix('fence')
  const keys = new KeyLayout(prefix, 'standalone')
  let c: RedisCoordinator
  let store: RedisStore
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000, turnWaitMs: 2_000 })
    await c.start()
    store = new RedisStore({ url: redisUrl(), prefix })
    raw = new Redis(redisUrl())
  })
  afterAll(async () => {
    await c?.stop()
    await store?.close()
    await raw?.quit()
  })

  for (const [i, f] of CORRUPT.entries()) {
    it(`acquireTurn on a chat whose f is ${JSON.stringify(f)}: CorruptStateError, nothing written`, async () => {
      const state = keys.chat(`chat:${i}`).state as string
      await raw.hset(state, 'f', f)
      const before = await raw.hgetall(state)
      const err = await c.acquireTurn(`chat:${i}`).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(CorruptStateError)
      expect((err as CorruptStateError).redisKey).toBe(state)
      expect(await raw.hgetall(state)).toEqual(before)
      expect(await raw.pttl(state)).toBe(-1)
    })
  }

  it('tryLead and acquireLockFenced on a corrupt f: CorruptStateError, nothing written', async () => {
    const lead = keys.lead('lead:x') as string
    const lock = keys.lock('lock:x') as string
    await raw.hset(lead, 'f', '9007199254740993')
    await raw.hset(lock, 'f', '1e300')
    const [l, k] = await Promise.all([
      c.tryLead('lead:x').catch((e: unknown) => e),
      store.acquireLockFenced('lock:x', 10_000).catch((e: unknown) => e),
    ])
    expect(l).toBeInstanceOf(CorruptStateError)
    expect(k).toBeInstanceOf(CorruptStateError)
    expect(await raw.hgetall(lead)).toEqual({ f: '9007199254740993' })
    expect(await raw.hgetall(lock)).toEqual({ f: '1e300' })
  })

  it("an operator's release of a held chat whose f is corrupt: CorruptStateError, nothing written", async () => {
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix, layout: 'standalone' })
    try {
      await c.acquireTurn('chat:held')
      const state = keys.chat('chat:held').state as string
      await raw.hset(state, 'f', '1e300')
      const before = await raw.hgetall(state)
      const err = await admin.releaseChat('chat:held').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(CorruptStateError)
      expect(await raw.hgetall(state)).toEqual(before)
    } finally {
      await admin.close()
    }
  })

  /** chat held by pod-a, pod-b's ticket queued behind it, then the fence corrupted; the chat's hash and queue as they are then. */
  async function corruptWithWaiter(key: string) {
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-b', leaseMs: 30_000, turnWaitMs: 20_000 })
    await b.start()
    const held = await c.acquireTurn(key)
    const waiting = b.acquireTurn(key).catch((e: unknown) => e)
    const { state, queue } = keys.chat(key) as { state: string; queue: string }
    for (let i = 0; i < 200 && (await raw.zcard(queue)) < 1; i++) await new Promise((r) => setTimeout(r, 10))
    await raw.hset(state, 'f', '9007199254740993')
    const before = { hash: await raw.hgetall(state), queue: await raw.zrange(queue, '0', '-1') }
    const now = async () => ({ hash: await raw.hgetall(state), queue: await raw.zrange(queue, '0', '-1') })
    const stop = async () => {
      await b.stop()
      await waiting
      await held.release().catch(() => {})
    }
    return { b, before, now, stop, state }
  }

  it("an operator's skip of a ticket in a chat whose f is corrupt: CorruptStateError before the ticket is removed", async () => {
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix, layout: 'standalone' })
    const w = await corruptWithWaiter('chat:skip')
    try {
      const ticket = Number(w.before.queue.at(-1))
      const err = await admin.skipTicket('chat:skip', ticket).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(CorruptStateError)
      expect((err as CorruptStateError).redisKey).toBe(w.state)
      expect(await w.now()).toEqual(w.before)
    } finally {
      await w.stop()
      await admin.close()
    }
  })

  it('replica evict of a replica queued in a chat whose f is corrupt: that chat is refused untouched and reported with the corrupt-state code', async () => {
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix, layout: 'standalone' })
    const w = await corruptWithWaiter('chat:evict')
    try {
      const res = await admin.evictReplica('pod-b', { ifIncarnation: w.b.incarnation, scan: true })
      expect(res.status).toBe('evicted')
      if (res.status !== 'evicted') return
      expect(res.chats).toEqual([])
      expect(res.failed).toEqual([expect.objectContaining({ key: 'chat:evict', kind: 'chat', code: 'ERR_CORRUPT_STATE' })])
      expect(await w.now()).toEqual(w.before)
    } finally {
      await w.stop()
      await admin.close()
    }
  })

  it('a fence just below the limit still grows by one', async () => {
    const state = keys.chat('chat:high').state as string
    await raw.hset(state, 'f', '9007199254740989')
    const turn = await c.acquireTurn('chat:high')
    expect(turn.fence).toBe(9007199254740990)
    await turn.release()
  })
})
