import { afterEach, describe, expect, it } from 'vitest'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'

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
})
