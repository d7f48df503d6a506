import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoordinationAdmin, RedisCoordinator, ConfigurationError, CoordinationUnavailableError } from '../../src/index.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, redisUrl, startRedis, uniquePrefix } from '../helpers/redis.js'
import { loadScript } from '../../src/scripts/load.js'

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
    const ttl = await client.pttl(`${prefix}:r:pod-a`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(3000)
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
    const dir = mkdtempSync(join(tmpdir(), 'bmc-aof-'))
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }))
    const args = aof ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : []
    const first = await startRedis({ args })
    let second: Awaited<ReturnType<typeof startRedis>> | null = null
    cleanup.push(async () => {
      await first.stop()
      await second?.stop()
    })
    const prefix = uniquePrefix()
    const a = new RedisCoordinator({ url: first.url, prefix, replicaId: 'a', leaseMs: 1200 })
    cleanup.push(() => a.stop())
    const lost: Array<{ reason: string }> = []
    const warnings: Array<{ code: string }> = []
    a.on('coordination:lease-lost', (e) => lost.push(e))
    a.on('coordination:warning', (w) => warnings.push(w))
    const turn = await a.acquireTurn('chat:restart')
    await first.stop()
    second = await startRedis({ port: first.port, args })
    const end = performance.now() + 3000
    while (turn.held && performance.now() < end) await new Promise((r) => setTimeout(r, 20))
    expect(turn.held).toBe(false)
    expect(lost).toHaveLength(1)
    expect(['reset', 'revoked', 'expired']).toContain(lost[0]!.reason)
    if (aof) {
      expect(lost[0]!.reason).toBe('reset')
      expect(warnings.map((w) => w.code)).toContain('server-changed')
    }
    // The chat is usable at once by another replica: the dropped turn was given back.
    const b = new RedisCoordinator({ url: second.url, prefix, replicaId: 'b', leaseMs: 1200 })
    cleanup.push(() => b.stop())
    const t0 = performance.now()
    const tb = await b.acquireTurn('chat:restart')
    expect(performance.now() - t0).toBeLessThan(1000)
    expect(tb.fence).toBeGreaterThan(turn.fence)
    await tb.release()
  })

  it('a handoff is pushed: the waiter gets the turn without waiting for a poll', async () => {
    const prefix = uniquePrefix()
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', maxPollMs: 5000 })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', maxPollMs: 5000 })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    )
    await a.start()
    await b.start()
    for (let i = 0; i < 5; i++) {
      const held = await a.acquireTurn('chat:push')
      const next = b.acquireTurn('chat:push')
      await new Promise((r) => setTimeout(r, 30))
      const t0 = performance.now()
      await held.release()
      const t = await next
      expect(performance.now() - t0).toBeLessThan(1000) // polls are 5 s apart here
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
    await new Promise((r) => setTimeout(r, 30))
    await held.release() // grants b's ticket and pushes it
    const end = performance.now() + 700
    while (performance.now() < end) {
      // the whole process freezes before b could take the pushed grant
    }
    const err = await bWait
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).reason).toBe('stale-grant')
    // b gave the stale grant back: another replica gets the chat at once.
    const t0 = performance.now()
    const tc = await c.acquireTurn('chat:frozen-waiter')
    expect(performance.now() - t0).toBeLessThan(300)
    await tc.release()
  })

  it('a stale grant message for a reused ticket number is not taken for a new grant', async () => {
    const prefix = uniquePrefix()
    const client = new Redis(redisUrl())
    cleanup.push(() => client.quit())
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a' })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b' })
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    )
    await a.start()
    await b.start()
    const stateKey = a.keys.chat('chat:stale').state
    // A late copy of an old grant of ticket 2 (as if the chat's key had expired since).
    await client.publish(a.keys.wakeChannel(a.incarnation), JSON.stringify({ t: '2', f: '1000', l: 15000, k: stateKey, p: '', pi: '' }))
    await new Promise((r) => setTimeout(r, 50))
    const tb = await b.acquireTurn('chat:stale') // ticket 1
    let aGot = false
    const ta = a.acquireTurn('chat:stale').then((t) => {
      aGot = true
      return t
    }) // ticket 2
    await new Promise((r) => setTimeout(r, 300))
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
    const evicted = new Promise((r) => a.once('coordination:evicted', r))
    const res = await admin.evictReplica('a', { ifIncarnation: a.incarnation, by: 'test@ops' })
    expect(res.status).toBe('evicted')
    const t0 = performance.now()
    const tb = await b.acquireTurn('chat:unlisted')
    await evicted
    expect(performance.now() - t0).toBeLessThan(2500) // a gave it back at its refused beat (every 1 s), not after the 3 s lease
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
    await new Promise((r) => setTimeout(r, 30))
    const cWait = c.acquireTurn('chat:revoked-push')
    await new Promise((r) => setTimeout(r, 30))
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
