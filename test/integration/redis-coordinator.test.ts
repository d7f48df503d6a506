import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoordinationAdmin, RedisCoordinator, ConfigurationError, CoordinationUnavailableError, StateReader } from '../../src/index.js'
import { freePort, redisUrl, startRedis, uniquePrefix } from '../helpers/redis.js'
import { loadScript } from '../../src/scripts/load.js'
import { blockEventLoop, until } from '../helpers/wait.js'
import { queueView, untilBeatListsWaiting, untilQueued } from '../helpers/shared-state.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('RedisCoordinator on a real Redis', () => {
  it('warns once, as an event, when maxmemory-policy could evict lease keys', async () => {
    const server = await startRedis({ args: ['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru'] })
    cleanup.push(() => server.stop())
    const c = new RedisCoordinator({ url: server.url, prefix: uniquePrefix() })
    cleanup.push(() => c.stop())
    const warnings: Array<{ code: string; message: string }> = []
    c.on('coordination:warning', (w) => warnings.push(w))
    await c.start()
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'eviction-policy', message: expect.stringMatching(/allkeys-lru.*noeviction/) }),
    ])
    const t = await c.acquireTurn('chat:1') // a warning, not a crash
    await t.release()
  })

  it('says nothing with noeviction', async () => {
    const c = new RedisCoordinator({ url: redisUrl(), prefix: uniquePrefix() })
    cleanup.push(() => c.stop())
    const warnings: unknown[] = []
    c.on('coordination:warning', (w) => warnings.push(w))
    await c.start()
    expect(warnings).toEqual([])
  })

  it('refuses a client with an ioredis keyPrefix', () => {
    const client = new Redis(redisUrl(), { keyPrefix: 'x:', lazyConnect: true })
    expect(() => new RedisCoordinator({ redis: client })).toThrow(ConfigurationError)
    client.disconnect()
  })

  it('uses a caller client without closing it, and writes the schema and heartbeat records', async () => {
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const prefix = uniquePrefix()
    const c = new RedisCoordinator({ redis: client, prefix, replicaId: 'pod-a', leaseMs: 3000 })
    await c.start()
    expect(await client.hgetall(`${prefix}:schema`)).toMatchObject({ version: '1', layout: 'standalone' })
    const beat = await client.hgetall(`${prefix}:r:pod-a`)
    expect(beat.inc).toBe(c.incarnation)
    expect(JSON.parse(beat.info!)).toMatchObject({ pid: process.pid, leaseMs: 3000 })
    // The heartbeat itself ends at `exp` (leaseMs after the beat); the record is kept 5 minutes more,
    // so a replica that stops beating without an orderly stop reads as gone (src/state/health.ts).
    const ttl = await client.pttl(`${prefix}:r:pod-a`)
    expect(ttl).toBeGreaterThan(300_000)
    expect(ttl).toBeLessThanOrEqual(303_000)
    expect(Number(beat.exp) - Number(beat.beat)).toBe(3000)
    await c.stop()
    expect(await client.exists(`${prefix}:r:pod-a`)).toBe(0)
    expect(await client.ping()).toBe('PONG')
  })

  it('start() rejects with CoordinationUnavailableError when nothing listens', async () => {
    const port = await freePort()
    const c = new RedisCoordinator({ url: `redis://127.0.0.1:${port}`, prefix: uniquePrefix(), leaseMs: 900 })
    await expect(c.start()).rejects.toBeInstanceOf(CoordinationUnavailableError)
  })

  it('re-loads its scripts after SCRIPT FLUSH (NOSCRIPT falls back to EVAL)', async () => {
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const c = new RedisCoordinator({ url: redisUrl(), prefix: uniquePrefix() })
    cleanup.push(() => c.stop())
    const t1 = await c.acquireTurn('chat:flush')
    await client.script('FLUSH')
    await t1.release()
    const t2 = await c.acquireTurn('chat:flush')
    expect(t2.fence).toBeGreaterThan(t1.fence)
    await t2.release()
  })

  it('a released chat keeps its last holder for previousHolder, and its keys expire when idle', async () => {
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const prefix = uniquePrefix()
    const c = new RedisCoordinator({ url: redisUrl(), prefix, idleKeyTtlMs: 1000, leaseMs: 900 })
    cleanup.push(() => c.stop())
    const t = await c.acquireTurn('chat:idle')
    await t.release()
    const ttl = await client.pttl(`${prefix}:c:chat:idle`)
    expect(ttl).toBeGreaterThan(1000)
    expect(ttl).toBeLessThanOrEqual(2800)
    expect(await client.exists(`${prefix}:q:chat:idle`)).toBe(0)
  })

  it.each([
    ['with its data kept (AOF)', true],
    ['with its data gone', false],
  ])('a Redis restarted %s: the holder drops its turn (fail closed) and the chat moves on', async (_name, aof) => {
    const server = await startRedis({ persist: aof ? 'aof' : 'none' })
    cleanup.push(() => server.stop())
    const prefix = uniquePrefix()
    const a = new RedisCoordinator({ url: server.url, prefix, replicaId: 'a', leaseMs: 1200 })
    cleanup.push(() => a.stop())
    const lost: Array<{ reason: string }> = []
    const warnings: Array<{ code: string }> = []
    a.on('coordination:lease-lost', (e) => lost.push(e))
    a.on('coordination:warning', (w) => warnings.push(w))
    const turn = await a.acquireTurn('chat:restart')
    await server.restart() // killed, back on the same port: with its AOF, or empty
    await until(() => !turn.held, 3000, 'the holder dropping its turn')
    expect(lost).toHaveLength(1)
    expect(['reset', 'revoked', 'expired']).toContain(lost[0]!.reason)
    if (aof) {
      expect(lost[0]!.reason).toBe('reset')
      expect(warnings.map((w) => w.code)).toContain('server-changed')
    }
    // The chat is usable at once by another replica: the dropped turn was given back, not left to
    // expire (an expired holder stays in the hash until the next grant; a released one is gone).
    const b = new RedisCoordinator({ url: server.url, prefix, replicaId: 'b', leaseMs: 1200 })
    cleanup.push(() => b.stop())
    await until(async () => (await queueView(b, 'chat:restart')).holder === null, 5000, 'the dropped turn given back')
    const tb = await b.acquireTurn('chat:restart')
    expect(tb.fence).toBeGreaterThan(turn.fence)
    await tb.release()
  })

  it('a handoff is pushed: the waiter gets the turn without waiting for a poll', async () => {
    const prefix = uniquePrefix()
    const maxPollMs = 20_000 // a waiter polls every 20 s: a handoff within 10 s was pushed
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', maxPollMs })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', maxPollMs })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    )
    await a.start()
    await b.start()
    for (let i = 0; i < 5; i++) {
      const held = await a.acquireTurn('chat:push')
      const next = b.acquireTurn('chat:push')
      await untilBeatListsWaiting(b, ['chat:push']) // b sleeps until its next poll
      const t0 = performance.now()
      await held.release()
      const t = await next
      expect(performance.now() - t0).toBeLessThan(maxPollMs / 2) // generous: half the time to b's next poll
      expect(t.fence).toBeGreaterThan(held.fence)
      expect(t.previousHolder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
      await t.release()
    }
  })

  it('a waiter frozen while its grant was pushed does not act on it, and passes it on', async () => {
    const prefix = uniquePrefix()
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', leaseMs: 600, maxPollMs: 5000 })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', leaseMs: 600, maxPollMs: 5000 })
    const c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'c', leaseMs: 600 })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
      () => c.stop(),
    )
    await Promise.all([a.start(), b.start(), c.start()])
    const held = await a.acquireTurn('chat:frozen-waiter')
    const bWait = b.acquireTurn('chat:frozen-waiter', { waitMs: 10_000 }).catch((e: unknown) => e)
    await untilBeatListsWaiting(b, ['chat:frozen-waiter']) // b sleeps until its next poll
    await held.release() // grants b's ticket and pushes it
    blockEventLoop(700) // the whole process freezes before b could take the pushed grant
    const err = await bWait
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).reason).toBe('stale-grant')
    // The offer to b lapsed while it was frozen (b never took it up): the chat is free for another
    // replica at once, and b — which never served it — is not its previous holder.
    expect(await queueView(c, 'chat:frozen-waiter')).toEqual({ holder: null, queued: [], skipped: 0 })
    const tc = await c.acquireTurn('chat:frozen-waiter')
    expect(tc.previousHolder?.replicaId).toBe('a')
    await tc.release()
  })

  it('a stale grant message for a reused ticket number is not taken for a new grant', async () => {
    const prefix = uniquePrefix()
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    // a polls once a minute: it learns of grants by push, in the order they were published
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', maxPollMs: 60_000 })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b' })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    )
    await a.start()
    await b.start()
    const stateKey = a.keys.chat('chat:stale').state
    const marker = await b.acquireTurn('chat:marker')
    const aMarker = a.acquireTurn('chat:marker')
    await untilBeatListsWaiting(a, ['chat:marker'])
    // A late copy of an old grant of ticket 2 (as if the chat's key had expired since)…
    await client.publish(a.keys.wakeChannel(a.incarnation), JSON.stringify({ t: '2', f: '1000', l: 15000, k: stateKey, p: '', pi: '' }))
    // …then a grant pushed on the same channel: once a has that turn, it has read the late copy.
    await marker.release()
    await (await aMarker).release()
    const tb = await b.acquireTurn('chat:stale') // ticket 1
    let aGot = false
    const ta = a.acquireTurn('chat:stale').then((t) => {
      aGot = true
      return t
    }) // ticket 2
    // a has its ticket and sleeps: had it taken the late copy for its grant, it would hold the chat now.
    await untilBeatListsWaiting(a, ['chat:stale'])
    expect(aGot).toBe(false) // b holds the chat: a must wait
    await tb.release()
    const turn = await ta
    expect(turn.fence).toBeGreaterThan(tb.fence)
    await turn.release()
  })

  it('an evicted replica gives back the turns its last heartbeat did not list', async () => {
    const prefix = uniquePrefix()
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', leaseMs: 3000 })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', leaseMs: 3000 })
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
      () => admin.close(),
    )
    await a.start()
    await b.start()
    await a.acquireTurn('chat:unlisted') // taken after the start beat: not in the heartbeat record yet
    const reader = new StateReader(admin.redis, admin.keys)
    const leaseEnd = (await reader.chat('chat:unlisted')).chat!.holder!.expiresAtMs
    const evicted = new Promise((r) => a.once('coordination:evicted', r))
    const res = await admin.evictReplica('a', { ifIncarnation: a.incarnation, by: 'test@ops' })
    expect(res.status).toBe('evicted')
    const tb = await b.acquireTurn('chat:unlisted')
    await evicted
    // Ordering on Redis's clock: b was granted before a's lease would have run out — a gave the turn
    // back at its refused beat (every 1 s), it did not expire (3 s).
    expect((await reader.chat('chat:unlisted')).chat!.holder!.grantedAtMs).toBeLessThan(leaseEnd)
    await tb.release()
  })

  it('a pushed grant revoked by an operator before it was taken is not taken', async () => {
    const prefix = uniquePrefix()
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a' })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', maxPollMs: 5000 })
    const c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'c' })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
      () => c.stop(),
    )
    await Promise.all([a.start(), b.start(), c.start()])
    const held = await a.acquireTurn('chat:revoked-push')
    const bWait = b.acquireTurn('chat:revoked-push').then(
      (t) => t,
      (e: unknown) => e,
    )
    await untilBeatListsWaiting(b, ['chat:revoked-push'])
    const cWait = c.acquireTurn('chat:revoked-push')
    await untilQueued(a, 'chat:revoked-push', ['b', 'c'])
    // In one step: a releases (b's ticket is granted and the grant pushed to b), then an operator
    // revokes b's fresh turn (c is granted, b is told): b receives both pushes together.
    const k = a.keys.chat('chat:revoked-push')
    const release = loadScript('turn-release-2')
    const revoke = loadScript('admin-chat-release-2')
    await client.script('LOAD', release.source)
    await client.script('LOAD', revoke.source)
    await client
      .multi()
      .evalsha(release.sha, 2, k.state, k.queue, a.incarnation, String(held.ticket), '15000', '60000', a.keys.wakeChannelPrefix, '')
      .evalsha(revoke.sha, 2, k.state, k.queue, '', b.incarnation, '15000', '60000', a.keys.wakeChannelPrefix)
      .exec()
    const tc = await cWait
    const bResult = await bWait
    // b must not believe it holds the chat while c does.
    if (bResult instanceof Error) expect(bResult).toBeInstanceOf(CoordinationUnavailableError)
    else expect((bResult as { held: boolean }).held).toBe(false)
    expect(tc.held).toBe(true)
    await tc.release()
  })
})
