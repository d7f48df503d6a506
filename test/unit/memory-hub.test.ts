import { afterEach, describe, expect, it } from 'vitest'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'
import { until } from '../helpers/wait.js'

describe('MemoryCoordinationHub', () => {
  const started: MemoryCoordinator[] = []
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop()
  })

  it('evicts the least recently used idle chat beyond maxIdleKeys; fences stay monotonic; a recreated chat has no previous holder', async () => {
    const hub = new MemoryCoordinationHub({ maxIdleKeys: 2 })
    const a = new MemoryCoordinator({ hub, replicaId: 'a', leaseMs: 5000 })
    started.push(a)
    const t1 = await a.acquireTurn('chat:1')
    await t1.release()
    await (await a.acquireTurn('chat:2')).release()
    expect(hub.size).toBe(2)
    // chat:1 is used again: chat:2 becomes the least recently used.
    const again = await a.acquireTurn('chat:1')
    expect(again.previousHolder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
    await again.release()
    await (await a.acquireTurn('chat:3')).release()
    expect(hub.size).toBe(2) // chat:2 evicted
    const t2 = await a.acquireTurn('chat:2')
    expect(t2.previousHolder).toBeNull()
    expect(t2.fence).toBeGreaterThan(again.fence)
    await t2.release()
    // Busy chats are never evicted.
    const held = await a.acquireTurn('chat:held')
    for (let i = 0; i < 5; i++) await (await a.acquireTurn(`chat:x${i}`)).release()
    expect(held.held).toBe(true)
    const next = a.acquireTurn('chat:held', { waitMs: 50 }).catch((e: Error) => e)
    expect(await next).toBeInstanceOf(Error) // still held: the state was not evicted
    await held.release()
  })

  it('a hub "restart" (new identity) makes every coordinator drop its leases', async () => {
    const hub = new MemoryCoordinationHub()
    const a = new MemoryCoordinator({ hub, replicaId: 'a', leaseMs: 600 })
    started.push(a)
    const t = await a.acquireTurn('chat:1')
    const reasons: string[] = []
    a.on('coordination:lease-lost', (e: { reason: string }) => reasons.push(e.reason))
    hub.identity = 'memory-2'
    await a.renewNow()
    expect(t.held).toBe(false)
    expect(reasons).toEqual(['reset'])
  })

  it("leases run on the hub's clock (Redis's TIME), not the replicas': an injected clock moved past a lease ends it", async () => {
    let redisTime = 1_000_000
    const hub = new MemoryCoordinationHub({ now: () => redisTime })
    const a = new MemoryCoordinator({ hub, replicaId: 'a', leaseMs: 60_000 })
    const b = new MemoryCoordinator({ hub, replicaId: 'b', leaseMs: 60_000, maxPollMs: 10 })
    started.push(a, b)
    const lost: string[] = []
    a.on('coordination:lease-lost', (e: { reason: string }) => lost.push(e.reason))
    const held = await a.acquireTurn('chat:1')
    const waiting = b.acquireTurn('chat:1')
    await until(() => hub.chatState('chat:1')?.tickets.length === 1, 5000, "b's ticket queued")
    redisTime += 60_000 // the shared clock passes a's lease; the replicas' own clocks moved a few ms
    const turn = await waiting // b's next poll finds a's lease over
    expect(turn.previousHolder?.replicaId).toBe('a')
    expect(hub.chatState('chat:1')).toMatchObject({ holder: { replicaId: 'b' }, tickets: [] })
    await a.renewNow() // a learns at its next renewal that the chat is b's now
    expect(held.held).toBe(false)
    expect(lost).toEqual(['revoked'])
    await turn.release()
  })
})
