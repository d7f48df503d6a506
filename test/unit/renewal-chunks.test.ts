/**
 * A replica holding many leases renews them RENEW_CHUNK at a time, each chunk applied on its own: a
 * chunk whose replies fail leaves its own leases to the watchdog, and the others are renewed anyway.
 * Runs on the in-process hub (the reference backend) with its clock in the test's hands.
 */
import { describe, expect, it } from 'vitest'
import { Coordinator } from '../../src/coordinator/coordinator.js'
import { RENEW_CHUNK } from '../../src/coordinator/renewer.js'
import { MemoryBackend, MemoryCoordinationHub } from '../../src/testing/memory-hub.js'
import type { RenewItem, RenewReply } from '../../src/wire/types.js'

class ChunkSpy extends MemoryBackend {
  readonly sizes: number[] = []
  failChunk = -1
  override async renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>> {
    const n = this.sizes.push(items.length) - 1
    if (n === this.failChunk) return items.map(() => new Error('connection reset'))
    return super.renew(items, incarnation, leaseMs)
  }
}

/** A coordinator on that backend (MemoryCoordinator builds its own). */
class SpiedCoordinator extends Coordinator {}

describe('renewal in chunks', () => {
  it('renews 1,200 held turns in chunks of RENEW_CHUNK; a failed chunk loses only its own renewals', async () => {
    let now = 1_000_000_000
    const hub = new MemoryCoordinationHub({ now: () => now })
    const backend = new ChunkSpy(hub)
    const leaseMs = 60_000
    const c = new SpiedCoordinator(backend, { replicaId: 'pod-a', leaseMs })
    await c.start()
    try {
      const chats = Array.from({ length: 1200 }, (_, i) => `chat:${i}`)
      const turns = await Promise.all(chats.map((k) => c.acquireTurn(k)))
      backend.sizes.length = 0
      backend.failChunk = 1
      now += 50_000
      await c.renewNow()
      expect(RENEW_CHUNK).toBe(500)
      expect(backend.sizes).toEqual([500, 500, 200])
      now += 20_000 // past the grant's lease, inside a renewed one
      const expired = chats.filter((k) => hub.chatTurn(k).expired)
      expect(expired).toHaveLength(500)
      // the failed chunk's leases are the watchdog's to drop later, not lost at once
      expect(turns.every((t) => t.held)).toBe(true)
    } finally {
      await c.stop()
    }
  })
})
