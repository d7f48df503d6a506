/**
 * The store contract (fenced locks, scheduler leases, compare-and-set checkpoints, handover markers,
 * bad input): runs unchanged on MemoryStore, RedisStore on Redis standalone and on Redis Cluster. The
 * tests that plant raw values or read the key layout run on Redis only.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Cluster, Redis } from 'ioredis'
import {
  CheckpointConflictError,
  CoordinationUnavailableError,
  CorruptStateError,
  InvalidCheckpointError,
  LeaseLostError,
  type CoordinationStore,
  type Holder,
  type KeyLayout,
  type RedisStore,
  keyText,
} from '../../src/index.js'
import type { MemoryStore } from '../../src/testing/index.js'
import { blockEventLoop, until } from '../helpers/wait.js'
import type { QueueView } from '../helpers/shared-state.js'

const oddKeys = ['{x}', 'a}b{c', 'chat: with spaces', 'ñandú 🐦', 'x'.repeat(1024), '%7B', ':']

/** RedisStore or MemoryStore: the same methods. */
export type AnyStore = RedisStore | MemoryStore

// Both implement the store interface a runtime types against (a compile-time check).
const _typed: Array<(s: AnyStore) => CoordinationStore> = [(s) => s]
void _typed

export type StoreOptions = { maxAnswerBytes?: number; idleKeyTtlMs?: number; commandTimeoutMs?: number; sameAs?: AnyStore }

export interface StoreHarness {
  name: string
  /** A store on fresh shared state, or — `sameAs` — another replica's store on the same one. */
  store(options: StoreOptions): AnyStore
  /** A lock's holder as operators see it (the `owner` given at acquisition), or null. */
  lockOwner(s: AnyStore, key: string): Promise<string | null>
  /** Make a checkpoint expire `ms` from now (Redis: PEXPIRE; memory: its clock moved on). */
  expireCheckpointIn(s: AnyStore, key: string, ms: number): Promise<void>
  /** A handover marker's time left (ms), or null. */
  markerTtl(s: AnyStore, key: string): Promise<number | null>
  /** A chat's turn queue in the shared state. */
  queue(s: AnyStore, key: string): Promise<QueueView>
  /** The shared state's clock (Redis TIME, the hub's now). */
  now(s: AnyStore): Promise<number>
  /** A lead's holder in the shared state, or null. */
  leadHolder(s: AnyStore, name: string): Promise<Holder | null>
  /** The incarnation of a replica whose heartbeat is live in the shared state, or null. */
  liveIncarnation(s: AnyStore, replicaId: string): Promise<string | null>
  /** Make the shared state unreachable until `restore()`; null where the harness cannot (a shared Cluster). */
  outage(): Promise<{ restore(): Promise<void> }> | null
  /** Redis only: a raw client and the store's key layout, to plant values; null on memory. */
  raw(s: AnyStore): { client: Redis | Cluster; keys: KeyLayout } | null
}

export function defineStoreContract(h: StoreHarness): void {
  describe(`store contract: ${h.name}`, () => {
    const open: AnyStore[] = []
    const store = (options: StoreOptions = {}) => {
      const s = h.store(options)
      open.push(s)
      return s
    }
    afterEach(async () => {
      for (const o of open.splice(0)) await o.close().catch(() => {})
    })
    const queued = (s: AnyStore, key: string, ids: string[]) =>
      until(async () => expect((await h.queue(s, key)).queued).toEqual(ids), 5000, `tickets of [${ids.join(', ')}] queued for ${key}`)

    describe('fenced locks', () => {
      it('one holder; the fence grows on every acquisition; renew and release need the token', async () => {
        const s = store()
        const a = await s.acquireLockFenced('job:report', 5000)
        expect(a).toEqual({ token: expect.any(String), fence: expect.any(Number) })
        expect(await s.acquireLockFenced('job:report', 5000)).toBeNull()
        expect(await s.renewLock('job:report', a!.token, 5000)).toBe(true)
        expect(await s.renewLock('job:report', 'not-the-token', 5000)).toBe(false)
        expect(await s.releaseLock('job:report', 'not-the-token')).toBe(false)
        expect(await s.releaseLock('job:report', a!.token)).toBe(true)
        expect(await s.releaseLock('job:report', a!.token)).toBe(false)
        const b = await s.acquireLockFenced('job:report', 5000, { owner: 'pod-b' })
        expect(b!.fence).toBeGreaterThan(a!.fence)
        expect(b!.token).not.toBe(a!.token)
        expect(await h.lockOwner(s, 'job:report')).toBe('pod-b')
      })

      it('an expired lock goes to the next caller with a higher fence; the old token can no longer renew', async () => {
        const s = store()
        const a = await s.acquireLockFenced('job:ttl', 150)
        expect(await s.acquireLockFenced('job:ttl', 5000)).toBeNull()
        const b = await until(() => s.acquireLockFenced('job:ttl', 5000), 5000, 'the expired lock going to the next caller')
        expect(b.fence).toBeGreaterThan(a!.fence)
        expect(await s.renewLock('job:ttl', a!.token, 5000)).toBe(false)
        expect(await s.releaseLock('job:ttl', a!.token)).toBe(false)
      })

      it('fences keep growing after the lock key was cleaned up', async () => {
        const s = store({ idleKeyTtlMs: 1 })
        const a = await s.acquireLockFenced('job:gone', 50)
        const r = h.raw(s)
        const gone = async () => (r ? (await r.client.exists(r.keys.lock('job:gone'))) === 0 : (await h.lockOwner(s, 'job:gone')) === null)
        await until(gone, 5000, 'the lock key gone (ttl + idle TTL)')
        const b = await s.acquireLockFenced('job:gone', 50)
        expect(b!.fence).toBeGreaterThan(a!.fence)
      })

      it('refuses a TTL that is not a positive duration', async () => {
        const s = store()
        await expect(s.acquireLockFenced('job:bad', 0)).rejects.toThrow(/at least 1 ms/)
        await expect(s.acquireLockFenced('job:bad', 'soon')).rejects.toThrow(/duration/)
      })
    })

    describe('scheduler leases (store.leases())', () => {
      it('acquire, renew and release with the fence, on the same fenced leads as tryLead', async () => {
        const s = store()
        const leases = s.leases()
        expect(s.leases()).toBe(leases) // one per store
        const other = store({ sameAs: s }).leases({ replicaId: 'pod-b' })
        const a = await leases.acquire('scheduler:report', 5000)
        expect(a).toEqual({ name: 'scheduler:report', fence: expect.any(Number) })
        expect(await other.acquire('scheduler:report', 5000)).toBeNull()
        expect(await leases.acquire('scheduler:report', 5000)).toBeNull() // held: also for its own holder
        const c = store({ sameAs: s }).coordinator({ replicaId: 'pod-c', leaseMs: 3000 })
        try {
          expect(await c.tryLead('scheduler:report')).toBeNull() // the same lead
        } finally {
          await c.stop()
        }
        expect(await leases.renew('scheduler:report', a!.fence, 5000)).toBe(true)
        expect(await other.renew('scheduler:report', a!.fence, 5000)).toBe(false) // not its incarnation
        expect(await other.release('scheduler:report', a!.fence)).toBe(false)
        expect(await leases.release('scheduler:report', a!.fence)).toBe(true)
        expect(await leases.release('scheduler:report', a!.fence)).toBe(false)
        const b = await other.acquire('scheduler:report', 5000)
        expect(b!.fence).toBeGreaterThan(a!.fence)
        expect(await leases.renew('scheduler:report', a!.fence, 5000)).toBe(false) // an old fence renews nothing
        expect(() => s.leases({ replicaId: 'someone-else' })).toThrow(/replicaId/)
      })

      it('an expired lease goes to the next caller with a higher fence; the old one can no longer renew', async () => {
        const s = store()
        const mine = s.leases()
        const theirs = store({ sameAs: s }).leases({ replicaId: 'pod-b' })
        const a = await mine.acquire('scheduler:ttl', 150)
        const b = await until(() => theirs.acquire('scheduler:ttl', 5000), 5000, 'the expired lease going to the next caller')
        expect(b.fence).toBeGreaterThan(a!.fence)
        expect(await mine.renew('scheduler:ttl', a!.fence, 5000)).toBe(false)
      })

      it("leases are held under the store coordinator's live identity; it is started by the first acquire", async () => {
        const s = store()
        const leases = s.leases()
        const a = await leases.acquire('scheduler:id', 5000)
        const c = s.coordinator()
        expect(c.running).toBe(true)
        expect({ replicaId: leases.replicaId, incarnation: leases.incarnation }).toEqual({
          replicaId: c.replicaId,
          incarnation: c.incarnation,
        })
        expect(await h.leadHolder(s, 'scheduler:id')).toEqual({ replicaId: c.replicaId, incarnation: c.incarnation })
        expect(await h.liveIncarnation(s, c.replicaId)).toBe(c.incarnation) // the holder has a heartbeat
        // One identity, two users: neither takes the other's lead up as its own.
        expect(await c.tryLead('scheduler:id')).toBeNull()
        expect(await leases.renew('scheduler:id', a!.fence, 5000)).toBe(true)
        const lead = await c.tryLead('job:own')
        expect(lead).not.toBeNull()
        expect(await leases.acquire('job:own', 5000)).toBeNull()
        await lead!.release()
        // A coordinator made first gives its replicaId; another one is refused, as store.coordinator() refuses it.
        const s2 = store({ sameAs: s })
        const c2 = s2.coordinator({ replicaId: 'pod-b', leaseMs: 3000 })
        const b = s2.leases({ replicaId: 'pod-b' })
        expect(() => s2.leases({ replicaId: 'pod-z' })).toThrow(/replicaId/)
        await c2.start()
        expect({ replicaId: b.replicaId, incarnation: b.incarnation }).toEqual({ replicaId: 'pod-b', incarnation: c2.incarnation })
        const held = await b.acquire('scheduler:b', 5000)
        expect(await h.leadHolder(s, 'scheduler:b')).toEqual({ replicaId: 'pod-b', incarnation: c2.incarnation })
        // Its coordinator stopped: the replica is gone, and its lease is not renewed any more.
        await c2.stop()
        expect(await b.renew('scheduler:b', held!.fence, 5000)).toBe(false)
        expect(await leases.release('scheduler:id', a!.fence)).toBe(true)
      })
    })

    describe('checkpoints', () => {
      const cp = { flow: 'order', step: 'address', state: { items: [1, 2], note: 'ñ' } }

      it('compare-and-set on a chained revision', async () => {
        const s = store()
        expect(await s.getCheckpoint('chat:1')).toBeNull()
        const r1 = await s.setCheckpointIf('chat:1', cp, null)
        const err = await s.setCheckpointIf('chat:1', cp, null).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(CheckpointConflictError)
        expect(err).toMatchObject({ reason: 'superseded', conflict: 'revision', currentRevision: r1 })
        const r2 = await s.setCheckpointIf('chat:1', { ...cp, step: 'payment', owner: { replicaId: 'a', incarnation: 'i1', fence: 7 } }, r1)
        expect(r2).toBeGreaterThan(r1)
        await expect(s.setCheckpointIf('chat:1', cp, r1)).rejects.toBeInstanceOf(LeaseLostError)
        const got = await s.getCheckpoint('chat:1')
        expect(got).toMatchObject({
          key: 'chat:1',
          flow: 'order',
          step: 'payment',
          state: cp.state,
          revision: r2,
          owner: { replicaId: 'a', incarnation: 'i1', fence: 7 },
          ephemeral: null,
          answer: null,
        })
        expect(got!.updatedAt).toBeGreaterThan(0)
        expect(await s.clearCheckpointIf('chat:1', r1)).toBe(false)
        expect(await s.getCheckpoint('chat:1')).not.toBeNull()
        expect(await s.clearCheckpointIf('chat:1', r2)).toBe(true)
        expect(await s.getCheckpoint('chat:1')).toBeNull()
        // Recreated after a clear: the revision still grows (no ABA with a stale reader of r2).
        const r3 = await s.setCheckpointIf('chat:1', cp, null)
        expect(r3).toBeGreaterThan(r2)
        await expect(s.setCheckpointIf('chat:1', cp, r2)).rejects.toBeInstanceOf(CheckpointConflictError)
      })

      it('fences out a replica that lost the chat: its write is superseded, its clear leaves the new row', async () => {
        const s = store()
        const a = s.coordinator({ replicaId: 'a', leaseMs: 3000 })
        const b = store({ sameAs: s }).coordinator({ replicaId: 'b', leaseMs: 3000 })
        try {
          await a.start()
          await b.start()
          const ta = await a.acquireTurn('chat:f')
          const ownerA = { replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
          const rA = await s.setCheckpointIf('chat:f', { ...cp, owner: ownerA }, null)
          await ta.release()
          const tb = await b.acquireTurn('chat:f')
          const err = await s.setCheckpointIf('chat:f', { ...cp, step: 'late', owner: ownerA }, rA).catch((e: unknown) => e)
          expect(err).toBeInstanceOf(LeaseLostError)
          expect(err).toMatchObject({ reason: 'superseded', conflict: 'fence', currentFence: tb.fence })
          const rB = await s.setCheckpointIf(
            'chat:f',
            { ...cp, step: 'b', owner: { replicaId: 'b', incarnation: b.incarnation, fence: tb.fence } },
            rA,
          )
          expect(await s.clearCheckpointIf('chat:f', rA)).toBe(false)
          // Even at the new owner's revision, a clear fenced with the old turn is refused.
          expect(await s.clearCheckpointIf('chat:f', rB, { fence: ta.fence })).toBe(false)
          expect(await s.getCheckpoint('chat:f')).not.toBeNull()
          expect(await s.getCheckpoint('chat:f')).toMatchObject({ step: 'b', revision: rB, owner: { replicaId: 'b', fence: tb.fence } })
          await tb.release()
        } finally {
          await a.stop()
          await b.stop()
        }
      })

      it("a refused write loses the writer's turn in its coordinator too: signal, assertHeld, one event, a release that wakes no one twice", async () => {
        const s = store()
        const a = s.coordinator({ replicaId: 'a', leaseMs: 3000 })
        const b = store({ sameAs: s }).coordinator({ replicaId: 'b', leaseMs: 3000 })
        const c = store({ sameAs: s }).coordinator({ replicaId: 'c', leaseMs: 3000 })
        try {
          await Promise.all([a.start(), b.start(), c.start()])
          const lost: Array<{ key: string; reason: string }> = []
          a.on('coordination:lease-lost', (e) => lost.push(e))
          const ta = await a.acquireTurn('chat:lost')
          const ownerA = { replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
          const r1 = await s.setCheckpointIf('chat:lost', { ...cp, owner: ownerA }, null)
          await s.setCheckpointIf('chat:lost', { ...cp, step: 'elsewhere' }, r1) // written meanwhile by someone else
          const wb = b.acquireTurn('chat:lost')
          await queued(s, 'chat:lost', ['b'])
          const wc = c.acquireTurn('chat:lost')
          await queued(s, 'chat:lost', ['b', 'c'])
          const err = await s.setCheckpointIf('chat:lost', { ...cp, step: 'late', owner: ownerA }, r1).catch((e: unknown) => e)
          expect(err).toMatchObject({ reason: 'superseded', conflict: 'revision' })
          expect(ta.signal.aborted).toBe(true)
          expect(ta.held).toBe(false)
          expect(() => ta.assertHeld()).toThrow(expect.objectContaining({ reason: 'superseded' }))
          expect(lost).toEqual([expect.objectContaining({ key: 'chat:lost', reason: 'superseded' })])
          // Still a's in Redis, it went to the next ticket at once — and only to it.
          const tb = await wb
          expect(tb.previousHolder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
          await ta.release()
          await ta.release()
          expect(await h.queue(s, 'chat:lost')).toMatchObject({ holder: 'b', queued: ['c'] })
          // A later write of the same lost turn is refused (its coordinator knows the turn ended) and says nothing more.
          await expect(s.setCheckpointIf('chat:lost', { ...cp, owner: ownerA }, null)).rejects.toMatchObject({ conflict: 'lease' })
          expect(lost).toHaveLength(1)
          await tb.release()
          await (await wc).release()
        } finally {
          await Promise.all([a.stop(), b.stop(), c.stop()])
        }
      })

      it('refuses a fenced write whose turn expired in the shared state, though nobody was granted since', async () => {
        const s = store()
        const a = s.coordinator({ replicaId: 'a', leaseMs: 900 })
        await a.start()
        const t0 = await h.now(s)
        const ta = await a.acquireTurn('chat:exp')
        const owner = { replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
        const r1 = await s.setCheckpointIf('chat:exp', { ...cp, owner }, null)
        await s.setHandoverMarker('chat:exp', { name: 'survey', replicaId: 'a', incarnation: a.incarnation, fence: ta.fence })
        a.crash() // nothing renews nor releases the turn; no coordinator of this process knows of it now
        await until(async () => (await h.now(s)) > t0 + 1000, 5000, "the turn's lease past its expiry")
        expect(await h.queue(s, 'chat:exp')).toMatchObject({ holder: 'a', queued: [] }) // still a's grant: no newer fence
        const err = await s.setCheckpointIf('chat:exp', { ...cp, step: 'late', owner }, r1).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(CheckpointConflictError)
        expect(err).toMatchObject({ reason: 'superseded', conflict: 'lease', write: 'checkpoint', currentFence: ta.fence })
        expect(await s.getCheckpoint('chat:exp')).toMatchObject({ step: 'address', revision: r1 })
        expect(await s.clearCheckpointIf('chat:exp', r1, { fence: ta.fence })).toBe(false)
        const late = { name: 'survey', replicaId: 'a', incarnation: a.incarnation, fence: ta.fence, data: { late: true } }
        await expect(s.setHandoverMarker('chat:exp', late)).rejects.toMatchObject({ conflict: 'lease', write: 'handover-marker' })
        expect(await s.clearHandoverMarker('chat:exp', { incarnation: a.incarnation, fence: ta.fence })).toBe(false)
        expect(await s.getHandoverMarker('chat:exp')).toMatchObject({ data: null, fence: ta.fence })
        // Unfenced writes are not the turn's: they still go through.
        expect(await s.clearCheckpointIf('chat:exp', r1)).toBe(true)
      })

      it('refuses a fenced write of a turn its coordinator here declared lost, before the shared state expires it', async () => {
        const s = store()
        const a = s.coordinator({ replicaId: 'a', leaseMs: 4000, renewMarginMs: 1900 })
        await a.start()
        const lost: unknown[] = []
        a.on('coordination:lease-lost', (e) => lost.push(e))
        const ta = await a.acquireTurn('chat:lost-here')
        const owner = { replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
        const r1 = await s.setCheckpointIf('chat:lost-here', { ...cp, owner }, null)
        await a.renewNow()
        // A freeze past the local deadline (renewed + 2.1 s) but short of the lease in the shared state (renewed + 4 s).
        blockEventLoop(2200)
        expect(() => ta.assertHeld()).toThrow(LeaseLostError)
        expect(lost).toHaveLength(1)
        const err = await s.setCheckpointIf('chat:lost-here', { ...cp, step: 'late', owner }, r1).catch((e: unknown) => e)
        expect(err).toMatchObject({ reason: 'superseded', conflict: 'lease', currentFence: ta.fence })
        expect(await s.getCheckpoint('chat:lost-here')).toMatchObject({ step: 'address', revision: r1 })
        expect(await s.clearCheckpointIf('chat:lost-here', r1, { fence: ta.fence, incarnation: a.incarnation })).toBe(false)
        const marker = { name: 'survey', replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
        await expect(s.setHandoverMarker('chat:lost-here', marker)).rejects.toMatchObject({ conflict: 'lease', write: 'handover-marker' })
        expect(await s.getHandoverMarker('chat:lost-here')).toBeNull()
        expect(lost).toHaveLength(1) // the refusals tell nothing new
        // A new turn of the same coordinator writes again.
        const again = await a.acquireTurn('chat:lost-here')
        const r2 = await s.setCheckpointIf('chat:lost-here', { ...cp, step: 'again', owner: { ...owner, fence: again.fence } }, r1)
        expect(r2).toBeGreaterThan(r1)
        await again.release()
        await a.stop()
      })

      it('a read with compatible fingerprints says whether the checkpoint is one of them', async () => {
        const s = store()
        await s.setCheckpointIf('chat:fp', { ...cp, ephemeral: { ttlMs: 60_000, fingerprint: 'v1' } }, null)
        await s.setCheckpointIf('chat:fp-persistent', cp, null)
        const plain = await s.getCheckpoint('chat:fp')
        expect(plain).not.toHaveProperty('compatible')
        expect(await s.getCheckpoint('chat:fp', { fingerprint: ['v2', 'v1'] })).toMatchObject({
          compatible: true,
          revision: plain!.revision,
        })
        expect(await s.getCheckpoint('chat:fp', { fingerprint: 'v1' })).toMatchObject({ compatible: true })
        // Another version's: still read (its revision, to replace or clear it), marked so.
        expect(await s.getCheckpoint('chat:fp', { fingerprint: ['v2'] })).toMatchObject({ compatible: false, revision: plain!.revision })
        expect(await s.getCheckpoint('chat:fp', { fingerprint: [] })).toMatchObject({ compatible: false })
        expect(await s.getCheckpoint('chat:fp-persistent', { fingerprint: ['v2'] })).toMatchObject({ compatible: true })
        expect(await s.getCheckpoint('chat:none', { fingerprint: ['v2'] })).toBeNull()
      })

      it('ephemeral (forward) checkpoints carry a fingerprint and expire ttl after their last write', async () => {
        const s = store()
        const eph = { ttlMs: 60_000, fingerprint: 'sha1:abc' }
        const r1 = await s.setCheckpointIf('chat:eph', { ...cp, ephemeral: eph }, null)
        const got = await s.getCheckpoint('chat:eph')
        expect(got!.ephemeral).toEqual(eph)
        const ttl = await s.checkpointTtl('chat:eph')
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(60_000)
        // Its TTL runs down (set here rather than waited for); the next write renews it.
        await h.expireCheckpointIn(s, 'chat:eph', 1000)
        await s.setCheckpointIf('chat:eph', { ...cp, step: 2, ephemeral: eph }, r1)
        expect(await s.checkpointTtl('chat:eph')).toBeGreaterThan(1000)
        expect(await s.getCheckpoint('chat:eph')).toMatchObject({ step: '2' })
        // Not written again within its TTL: it is gone.
        await s.setCheckpointIf(
          'chat:eph',
          { ...cp, step: 3, ephemeral: { ttlMs: 100, fingerprint: 'sha1:abc' } },
          (await s.getCheckpoint('chat:eph'))!.revision,
        )
        await until(async () => (await s.getCheckpoint('chat:eph')) === null, 5000, 'the ephemeral checkpoint expiring')
        // A persistent write over an ephemeral one drops the TTL.
        await s.setCheckpointIf('chat:eph2', { ...cp, ephemeral: { ttlMs: 300, fingerprint: 'f' } }, null)
        const rev = (await s.getCheckpoint('chat:eph2'))!.revision
        await s.setCheckpointIf('chat:eph2', cp, rev)
        expect(await s.checkpointTtl('chat:eph2')).toBeNull()
        expect((await s.getCheckpoint('chat:eph2'))!.ephemeral).toBeNull()
      })

      it('refuses state that is not plain JSON, with a clear error, and writes nothing', async () => {
        const s = store()
        class Cart {
          items = [1]
        }
        const cyclic: Record<string, unknown> = {}
        cyclic.self = cyclic
        const bad: Array<[unknown, RegExp]> = [
          [{ when: new Date() }, /state\.when is a Date/],
          [new Cart(), /Cart instance/],
          [{ f: () => 1 }, /state\.f is a function/],
          [{ m: new Map() }, /Map instance/],
          [{ u: undefined }, /state\.u is undefined/],
          [{ n: Number.NaN }, /NaN/],
          [cyclic, /circular/],
        ]
        for (const [state, msg] of bad) {
          const err = await s.setCheckpointIf('chat:json', { flow: 'f', step: 1, state: state as never }, null).catch((e: unknown) => e)
          expect(err).toBeInstanceOf(InvalidCheckpointError)
          expect((err as Error).message).toMatch(msg)
        }
        expect(await s.getCheckpoint('chat:json')).toBeNull()
      })

      it('embeds a saved answer up to maxAnswerBytes; a larger one is left out and the checkpoint written without it', async () => {
        const s = store({ maxAnswerBytes: 100 })
        const answer = { type: 'text', body: 'yes please' }
        const small = await s.writeCheckpoint('chat:ans', { ...cp, answer }, null)
        expect(small).toEqual({ revision: expect.any(Number), answer: 'embedded', answerBytes: JSON.stringify(answer).length })
        const got = await s.getCheckpoint('chat:ans')
        expect(got).toMatchObject({ answer, answerBytes: JSON.stringify(answer).length })
        const big = { body: 'x'.repeat(200) }
        const large = await s.writeCheckpoint('chat:ans', { ...cp, step: 'next', answer: big }, small.revision)
        expect(large).toEqual({ revision: expect.any(Number), answer: 'omitted', answerBytes: JSON.stringify(big).length })
        expect(await s.getCheckpoint('chat:ans')).toMatchObject({ step: 'next', state: cp.state, answer: null, answerBytes: 0 })
        expect(await s.writeCheckpoint('chat:ans2', cp, null)).toMatchObject({ answer: 'none', answerBytes: 0 })
        // setCheckpointIf is the same write, answering with the revision.
        expect(await s.setCheckpointIf('chat:ans3', { ...cp, answer: big }, null)).toBeGreaterThan(0)
        expect(await s.getCheckpoint('chat:ans3')).toMatchObject({ answer: null })
      })

      it('an ephemeral checkpoint without ttlMs expires 5 minutes after its last write; a handover marker without one too', async () => {
        const s = store()
        await s.setCheckpointIf('chat:eph-default', { ...cp, ephemeral: { fingerprint: 'f' } }, null)
        const ttl = await s.checkpointTtl('chat:eph-default')
        expect(ttl).toBeGreaterThan(5 * 60_000 - 60_000)
        expect(ttl).toBeLessThanOrEqual(5 * 60_000)
        await s.setHandoverMarker('chat:eph-default', { name: 'survey', replicaId: 'a', incarnation: 'i1' })
        const markerTtl = (await h.markerTtl(s, 'chat:eph-default'))!
        expect(markerTtl).toBeGreaterThan(5 * 60_000 - 60_000)
        expect(markerTtl).toBeLessThanOrEqual(5 * 60_000)
      })
    })

    describe('handover markers', () => {
      it('set, read (waiting since kept), clear only by its writer, take once', async () => {
        const s = store()
        await s.setHandoverMarker('chat:h', { name: 'survey', replicaId: 'a', incarnation: 'i1', ttlMs: 60_000 })
        const m1 = await s.getHandoverMarker('chat:h')
        expect(m1).toMatchObject({ key: 'chat:h', name: 'survey', replicaId: 'a', incarnation: 'i1', data: null })
        await until(async () => (await h.now(s)) > m1!.since, 5000, "the shared clock past the marker's since") // a rewrite would show
        await s.setHandoverMarker('chat:h', { name: 'survey', replicaId: 'a', incarnation: 'i1', data: { askedAt: 3 } })
        const m2 = await s.getHandoverMarker('chat:h')
        expect(m2!.since).toBe(m1!.since)
        expect(m2!.data).toEqual({ askedAt: 3 })
        expect(await s.clearHandoverMarker('chat:h', { incarnation: 'other' })).toBe(false)
        const taken = await s.takeHandoverMarker('chat:h')
        expect(taken).toMatchObject({ name: 'survey', replicaId: 'a' })
        expect(await s.takeHandoverMarker('chat:h')).toBeNull()
        await s.setHandoverMarker('chat:h', { name: 'survey', replicaId: 'a', incarnation: 'i1' })
        expect(await s.clearHandoverMarker('chat:h', { incarnation: 'i1' })).toBe(true)
        expect(await s.getHandoverMarker('chat:h')).toBeNull()
      })
      it('take with `unless` leaves the marker of that incarnation in place and says so', async () => {
        const s = store()
        await s.setHandoverMarker('chat:own', { name: 'survey', replicaId: 'a', incarnation: 'i1' })
        expect(await s.takeHandoverMarker('chat:own', { unless: 'i1' })).toMatchObject({ name: 'survey', incarnation: 'i1', taken: false })
        expect(await s.getHandoverMarker('chat:own')).toMatchObject({ incarnation: 'i1' })
        expect(await s.takeHandoverMarker('chat:own', { unless: 'i2' })).toMatchObject({ incarnation: 'i1', taken: true })
        expect(await s.getHandoverMarker('chat:own')).toBeNull()
        expect(await s.takeHandoverMarker('chat:own', { unless: 'i1' })).toBeNull()
      })

      it("fenced markers: a stale replica's late write cannot replace the new owner's, nor its clear remove it", async () => {
        const s = store()
        const a = s.coordinator({ replicaId: 'a', leaseMs: 3000 })
        const b = store({ sameAs: s }).coordinator({ replicaId: 'b', leaseMs: 3000 })
        try {
          await Promise.all([a.start(), b.start()])
          const ta = await a.acquireTurn('chat:hf')
          const markerA = { name: 'survey', replicaId: 'a', incarnation: a.incarnation, fence: ta.fence }
          await s.setHandoverMarker('chat:hf', markerA)
          expect(await s.getHandoverMarker('chat:hf')).toMatchObject({ incarnation: a.incarnation, fence: ta.fence })
          await ta.release()
          const tb = await b.acquireTurn('chat:hf')
          expect(await s.takeHandoverMarker('chat:hf', { unless: b.incarnation })).toMatchObject({ replicaId: 'a', taken: true })
          await s.setHandoverMarker('chat:hf', { name: 'quiz', replicaId: 'b', incarnation: b.incarnation, fence: tb.fence })
          const err = await s.setHandoverMarker('chat:hf', { ...markerA, name: 'late' }).catch((e: unknown) => e)
          expect(err).toBeInstanceOf(CheckpointConflictError)
          expect(err).toMatchObject({ reason: 'superseded', conflict: 'fence', write: 'handover-marker', currentFence: tb.fence })
          expect(await s.clearHandoverMarker('chat:hf', { fence: ta.fence })).toBe(false)
          expect(await s.getHandoverMarker('chat:hf')).toMatchObject({ name: 'quiz', incarnation: b.incarnation, fence: tb.fence })
          expect(await s.clearHandoverMarker('chat:hf', { incarnation: b.incarnation, fence: tb.fence })).toBe(true)
          // A marker written unfenced (an older client) blocks no fenced write, and an unfenced write is not fenced.
          await s.setHandoverMarker('chat:hf', { name: 'old', replicaId: 'x', incarnation: 'x1' })
          expect(await s.getHandoverMarker('chat:hf')).toMatchObject({ name: 'old', fence: null })
          await s.setHandoverMarker('chat:hf', { name: 'quiz', replicaId: 'b', incarnation: b.incarnation, fence: tb.fence })
          expect(await s.getHandoverMarker('chat:hf')).toMatchObject({ name: 'quiz', fence: tb.fence })
          await tb.release()
        } finally {
          await Promise.all([a.stop(), b.stop()])
        }
      })
    })

    describe('shared state unreachable', () => {
      it('every store call and tryLead reject with CoordinationUnavailableError (unreachable)', async (ctx) => {
        const cp = { flow: 'order', step: 1, state: {} }
        const s = store({ commandTimeoutMs: 300 })
        const c = s.coordinator({ replicaId: 'a', leaseMs: 900 })
        await c.start()
        const rev = await s.setCheckpointIf('chat:down', cp, null)
        const lock = await s.acquireLockFenced('job:down', 5000)
        const outage = await h.outage()
        if (!outage) return ctx.skip()
        try {
          const leases = s.leases()
          const calls: Array<[string, () => Promise<unknown>]> = [
            ['tryLead', () => c.tryLead('job:down-lead')],
            ['acquireLockFenced', () => s.acquireLockFenced('job:down2', 5000)],
            ['renewLock', () => s.renewLock('job:down', lock!.token, 5000)],
            ['releaseLock', () => s.releaseLock('job:down', lock!.token)],
            ['getCheckpoint', () => s.getCheckpoint('chat:down')],
            ['setCheckpointIf', () => s.setCheckpointIf('chat:down', cp, rev)],
            ['clearCheckpointIf', () => s.clearCheckpointIf('chat:down', rev)],
            ['checkpointTtl', () => s.checkpointTtl('chat:down')],
            ['setHandoverMarker', () => s.setHandoverMarker('chat:down', { name: 'n', replicaId: 'a', incarnation: 'i' })],
            ['getHandoverMarker', () => s.getHandoverMarker('chat:down')],
            ['clearHandoverMarker', () => s.clearHandoverMarker('chat:down')],
            ['takeHandoverMarker', () => s.takeHandoverMarker('chat:down')],
            ['leases().acquire', () => leases.acquire('scheduler:down', 5000)],
          ]
          const results = await Promise.all(
            calls.map(
              async ([name, f]) =>
                [
                  name,
                  await f().then(
                    (v) => v,
                    (e: unknown) => e,
                  ),
                ] as const,
            ),
          )
          for (const [name, r] of results) {
            expect(r, name).toBeInstanceOf(CoordinationUnavailableError)
            expect((r as CoordinationUnavailableError).reason, name).toBe('unreachable')
          }
        } finally {
          await outage.restore()
          await c.stop()
        }
      })
    })

    describe('bad input', () => {
      it('odd keys work for locks, checkpoints and markers, and stay under the prefix', async () => {
        const s = store()
        const r = h.raw(s)
        for (const key of oddKeys) {
          const lock = await s.acquireLockFenced(key, 5000)
          expect(lock).not.toBeNull()
          expect(await s.releaseLock(key, lock!.token)).toBe(true)
          const rev = await s.setCheckpointIf(key, { flow: 'f', step: 1, state: { key } }, null)
          expect(await s.getCheckpoint(key)).toMatchObject({ key, revision: rev, state: { key } })
          await s.setHandoverMarker(key, { name: 'n', replicaId: 'r', incarnation: 'i' })
          expect((await s.getHandoverMarker(key))!.key).toBe(key)
          for (const k of r ? [r.keys.lock(key), r.keys.chat(key).checkpoint] : []) {
            expect(keyText(k).startsWith(`${r!.keys.prefix}:`)).toBe(true)
            expect(r!.keys.parse(k)?.id).toBe(key)
          }
        }
        await expect(s.getCheckpoint('')).rejects.toThrow(/non-empty/)
        await expect(s.acquireLockFenced('', 100)).rejects.toThrow(/non-empty/)
      })

      it('corrupt values give a typed error naming the key, never a crash', async (ctx) => {
        const s = store()
        const planted = h.raw(s)
        if (!planted) return ctx.skip() // nothing can be planted in the memory store
        const { client: r, keys } = planted
        const cpKey = keys.chat('chat:bad').checkpoint
        await r.set(cpKey, 'not a hash')
        const e1 = await s.getCheckpoint('chat:bad').catch((e: unknown) => e)
        expect(e1).toBeInstanceOf(CorruptStateError)
        expect((e1 as CorruptStateError).redisKey).toBe(cpKey)
        await expect(s.setCheckpointIf('chat:bad', { flow: 'f', step: 1, state: null }, null)).rejects.toBeInstanceOf(CorruptStateError)

        const cp2 = keys.chat('chat:json').checkpoint
        await r.hset(cp2, { rev: '5', flow: 'f', step: '1', d: '{broken' })
        const e2 = await s.getCheckpoint('chat:json').catch((e: unknown) => e)
        expect(e2).toBeInstanceOf(CorruptStateError)
        expect((e2 as Error).message).toContain(cp2)

        const lockKey = keys.lock('job:bad')
        await r.lpush(lockKey, 'x')
        await expect(s.acquireLockFenced('job:bad', 100)).rejects.toBeInstanceOf(CorruptStateError)

        const c = s.coordinator({ replicaId: 'a' })
        try {
          await c.start()
          await r.set(keys.chat('chat:wrongtype').state, 'x')
          const e3 = await c.acquireTurn('chat:wrongtype').catch((e: unknown) => e)
          expect(e3).toBeInstanceOf(CorruptStateError)
          // The replica goes on serving other chats.
          const t = await c.acquireTurn('chat:fine')
          await t.release()
        } finally {
          await c.stop()
        }
      })
    })
  })
}
