/**
 * The chat-turn contract. It runs unchanged against the in-memory reference, Redis standalone and
 * Redis Cluster: each test file passes a harness that makes coordinators sharing one state.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CoordinationUnavailableError, LeaseLostError, type Coordinator, type CoordinatorOptions, type Turn } from '../../src/index.js'
import { blockEventLoop, sleep, until } from '../helpers/wait.js'
import { startCoordinator } from '../helpers/redis.js'
import { spawnTurnHolder } from '../helpers/turn-holder.js'
import type { QueueView } from '../helpers/shared-state.js'

export interface TurnHarness {
  name: string
  /** A coordinator on the shared state of this test (same prefix / hub). Not started. */
  make(options?: CoordinatorOptions): Coordinator
  /** Fresh shared state (a new prefix / hub) for the next test. */
  reset(): void
  /** Make the shared state unreachable for `make()`'d coordinators until `restore()`. */
  outage(): Promise<{ restore(): Promise<void> }>
  /** For the frozen-child test: how a child process reaches the same state, or null (memory). */
  childTarget(): { url: string; prefix: string; layout: string } | null
  /** A chat's turn queue in the shared state (what the tests wait on instead of sleeping). */
  queue(key: string): Promise<QueueView>
  /**
   * A coordinator (not started) whose link alone can be cut and restored while the others go on;
   * `cut()` resolves once the replica's client knows (what it sends from then on is lost, not held
   * for later). Null where the harness cannot (a cluster).
   */
  linked(options?: CoordinatorOptions): Promise<CuttableLink> | null
  /** Count the wake-ups the shared state sends to a (started) coordinator from now on. */
  pushesTo(coordinator: Coordinator): Promise<PushCounter>
}

export interface PushCounter {
  /** Wake-ups sent so far: every one published before this call is counted. */
  count(): Promise<number>
  stop(): Promise<void>
}

export interface CuttableLink {
  coordinator: Coordinator
  cut(): Promise<void>
  /** From now on what the replica sends reaches the shared state and takes effect, but no reply comes back (until cut/restore). */
  loseReplies(): void
  restore(): void
}

export function defineTurnContract(h: TurnHarness): void {
  describe(`chat turns contract: ${h.name}`, () => {
    const started: Coordinator[] = []
    const replica = async (options: CoordinatorOptions = {}) => {
      const c = await startCoordinator(() => h.make({ leaseMs: 1500, maxPollMs: 50, ...options }))
      started.push(c)
      return c
    }

    afterEach(async () => {
      await Promise.allSettled(started.splice(0).map((c) => c.stop()))
      h.reset()
    })
    /** Resolve once exactly these replicas have tickets queued for `key`, in this order. */
    const queued = (key: string, ...replicaIds: string[]) =>
      until(
        async () => expect((await h.queue(key)).queued).toEqual(replicaIds),
        5000,
        `tickets of [${replicaIds.join(', ')}] queued for ${key}`,
      )

    it('grants a free chat at once with a fresh fence and no previous holder', async () => {
      const a = await replica({ replicaId: 'a' })
      const turn = await a.acquireTurn('chat:1')
      expect(turn.fence).toBeGreaterThan(0)
      expect(turn.ticket).toBeGreaterThan(0)
      expect(turn.previousHolder).toBeNull()
      expect(turn.held).toBe(true)
      expect(() => turn.assertHeld()).not.toThrow()
      await turn.release()
      expect(turn.held).toBe(false)
      const again = await a.acquireTurn('chat:1')
      expect(again.fence).toBeGreaterThan(turn.fence)
      expect(again.previousHolder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
      await again.release()
    })

    it('grants turns in ticket order across three replicas, one holder at a time', async () => {
      const [a, b, c] = await Promise.all([replica({ replicaId: 'a' }), replica({ replicaId: 'b' }), replica({ replicaId: 'c' })])
      const first = await a.acquireTurn('chat:fifo')
      const order: string[] = []
      const fences: number[] = [first.fence]
      let holding = 1
      let maxHolding = 1
      const take = async (who: Coordinator, label: string) => {
        const t = await who.acquireTurn('chat:fifo')
        holding++
        maxHolding = Math.max(maxHolding, holding)
        order.push(label)
        fences.push(t.fence)
        await sleep(5) // the work done while holding: an overlapping grant would show meanwhile
        holding--
        await t.release()
      }
      const pending: Promise<void>[] = []
      const inLine: string[] = []
      for (const [who, label] of [
        [b, 'b1'],
        [c, 'c1'],
        [a, 'a2'],
        [b, 'b2'],
        [c, 'c2'],
      ] as const) {
        pending.push(take(who, label))
        inLine.push(who.replicaId)
        await queued('chat:fifo', ...inLine) // each ticket is taken before the next request is sent
      }
      holding--
      await first.release()
      await Promise.all(pending)
      expect(order).toEqual(['b1', 'c1', 'a2', 'b2', 'c2'])
      expect(maxHolding).toBe(1)
      for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!)
    })

    it("a release hands the turn to the same replica's next message in its reply, with no wake-up; order kept across replicas", async () => {
      const [a, b] = await Promise.all([replica({ replicaId: 'a', maxPollMs: 5000 }), replica({ replicaId: 'b', maxPollMs: 5000 })])
      const first = await a.acquireTurn('chat:local')
      const pushesToA = await h.pushesTo(a)
      const order: Array<{ label: string; fence: number; previous: string | null }> = []
      const take = async (who: Coordinator, label: string) => {
        const t = await who.acquireTurn('chat:local')
        order.push({ label, fence: t.fence, previous: t.previousHolder?.replicaId ?? null })
        await t.release()
      }
      const pending: Promise<void>[] = []
      const inLine: string[] = []
      for (const [who, label] of [
        [a, 'a2'],
        [b, 'b1'],
        [a, 'a3'],
        [a, 'a4'],
        [b, 'b2'],
      ] as const) {
        pending.push(take(who, label))
        inLine.push(who.replicaId)
        await queued('chat:local', ...inLine)
      }
      await first.release()
      await Promise.all(pending)
      expect(order.map((o) => o.label)).toEqual(['a2', 'b1', 'a3', 'a4', 'b2'])
      expect(order.map((o) => o.previous)).toEqual(['a', 'a', 'b', 'a', 'a'])
      const fences = [first.fence, ...order.map((o) => o.fence)]
      for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!)
      // a2 and a4 came in the replies of a's own releases; only a3 (after b1) was pushed to a. With the
      // poll interval at 5 s, a wait that missed both would have failed the test's time limit.
      expect(await pushesToA.count()).toBe(1)
      await pushesToA.stop()
    })

    it("waiting costs per chat: only a replica's oldest message there polls, and a message queued longer than a lease without polling still takes the turn handed to it", async () => {
      const lease = 900
      const [a, b] = await Promise.all([replica({ replicaId: 'a', leaseMs: lease }), replica({ replicaId: 'b', leaseMs: lease })])
      const held = await b.acquireTurn('chat:deep')
      const got: string[] = []
      const take = async (label: string) => {
        const t = await a.acquireTurn('chat:deep', { waitMs: 20_000 })
        got.push(label)
        await t.release()
      }
      const pending = [take('a1')]
      await queued('chat:deep', 'a')
      pending.push(take('a2'))
      await queued('chat:deep', 'a', 'a')
      pending.push(take('a3'))
      await queued('chat:deep', 'a', 'a', 'a')
      // b holds (renewing) for two leases: a2 and a3 never poll (a1, the keeper, keeps all three alive).
      await sleep(2 * lease)
      expect(held.held).toBe(true)
      expect(await h.queue('chat:deep')).toMatchObject({ holder: 'b', queued: ['a', 'a', 'a'], skipped: 0 })
      await held.release()
      // a1 is offered the turn; a2 and a3 get theirs in the replies of a's own releases — their last
      // poll (their take) two leases ago, the grant fresh.
      await Promise.all(pending)
      expect(got).toEqual(['a1', 'a2', 'a3'])
    })

    it('a turn handed over in a release reply reaches its message even when that message took its ticket in the same breath', async () => {
      // Two replicas, eight messages in flight each, most on five hot chats: a release often hands the
      // turn to a ticket of its own replica whose take was answered in the same read as the release.
      // Polls every 10 s: a hand-off dropped for want of a registered waiter would stall its chat that long.
      const replicas = await Promise.all([replica({ replicaId: 'a', maxPollMs: 10_000 }), replica({ replicaId: 'b', maxPollMs: 10_000 })])
      let seed = 7
      const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
      let worst = 0
      await Promise.all(
        replicas.flatMap((c) =>
          Array.from({ length: 8 }, async () => {
            for (let i = 0; i < 60; i++) {
              const chat = `chat:hand-${rnd() < 0.9 ? Math.floor(rnd() * 5) : 5 + Math.floor(rnd() * 45)}`
              const asked = Date.now()
              const t = await c.acquireTurn(chat, { waitMs: 25_000 })
              worst = Math.max(worst, Date.now() - asked)
              await t.release()
            }
          }),
        ),
      )
      expect(worst).toBeLessThan(5000) // the poll interval is 10 s: no message waited for its poll
    })

    it('a message that gives up as its own replica hands it the turn passes the turn on at once', async () => {
      const a = await replica({ replicaId: 'a', maxPollMs: 5000 })
      const b = await replica({ replicaId: 'b', maxPollMs: 5000 })
      for (const abortFirst of [true, false]) {
        const held = await a.acquireTurn('chat:local-abort')
        const ctl = new AbortController()
        const mine = a.acquireTurn('chat:local-abort', { signal: ctl.signal }).catch((e: unknown) => e)
        await queued('chat:local-abort', 'a')
        const theirs = b.acquireTurn('chat:local-abort', { waitMs: 1000 }) // below leaseMs: a turn left to expire fails it
        await queued('chat:local-abort', 'a', 'b')
        // In one tick: the release (which hands the turn to a's queued message) and the abort.
        if (abortFirst) ctl.abort()
        const released = held.release()
        if (!abortFirst) ctl.abort()
        await released
        const err = await mine
        expect(err).toBeInstanceOf(CoordinationUnavailableError)
        expect((err as CoordinationUnavailableError).reason).toBe('aborted')
        const t = await theirs
        expect(t.fence).toBeGreaterThan(held.fence)
        await t.release()
      }
    })

    it('under load: no overlap, fences grow per chat, and each replica is served in its arrival order', async () => {
      const replicas = await Promise.all(['a', 'b', 'c'].map((id) => replica({ replicaId: id })))
      const chats = ['chat:x', 'chat:y', 'chat:z']
      const active = new Map<string, number>()
      const lastFence = new Map<string, number>()
      const served = new Map<string, number[]>() // `${replica}|${chat}` -> message seq in service order
      let overlaps = 0
      let fenceViolations = 0
      const messages: Promise<void>[] = []
      let seq = 0
      for (let round = 0; round < 20; round++) {
        for (const r of replicas) {
          const chat = chats[(round + r.replicaId.charCodeAt(0)) % chats.length]!
          const n = seq++
          messages.push(
            (async () => {
              const t = await r.acquireTurn(chat, { waitMs: 20_000 })
              if ((active.get(chat) ?? 0) > 0) overlaps++
              active.set(chat, (active.get(chat) ?? 0) + 1)
              if (t.fence <= (lastFence.get(chat) ?? 0)) fenceViolations++
              lastFence.set(chat, t.fence)
              const k = `${r.replicaId}|${chat}`
              served.set(k, [...(served.get(k) ?? []), n])
              await sleep(Math.random() * 3) // the work done while holding
              t.assertHeld()
              active.set(chat, active.get(chat)! - 1)
              await t.release()
            })(),
          )
        }
        await sleep(2) // messages keep arriving (the load's shape; each replica's order is its call order)
      }
      await Promise.all(messages)
      expect(overlaps).toBe(0)
      expect(fenceViolations).toBe(0)
      for (const list of served.values()) expect(list).toEqual([...list].sort((x, y) => x - y))
      expect([...served.values()].flat()).toHaveLength(60)
    })

    it('a restarted replica with the same id never inherits the dead process turn', async () => {
      const old = await replica({ replicaId: 'pod-1', leaseMs: 800 })
      const t1 = await old.acquireTurn('chat:inc')
      old.crash()
      const fresh = await replica({ replicaId: 'pod-1', leaseMs: 800 })
      expect(fresh.incarnation).not.toBe(old.incarnation)
      const before = performance.now()
      const t2 = await fresh.acquireTurn('chat:inc')
      // It had to wait for the dead incarnation's lease to run out: no inheritance.
      expect(performance.now() - before).toBeGreaterThan(400)
      expect(t2.fence).toBeGreaterThan(t1.fence)
      expect(t2.previousHolder).toEqual({ replicaId: 'pod-1', incarnation: old.incarnation })
      await t2.release()
    })

    it('skips the queued ticket of a dead replica', async () => {
      const a = await replica({ replicaId: 'a', leaseMs: 600, maxPollMs: 20 })
      const b = await replica({ replicaId: 'b', leaseMs: 600, maxPollMs: 20 })
      const c = await replica({ replicaId: 'c', leaseMs: 600, maxPollMs: 20 })
      const held = await a.acquireTurn('chat:dead')
      const bWait = b.acquireTurn('chat:dead').catch((e: unknown) => e)
      await queued('chat:dead', 'b')
      b.crash() // its ticket stays queued, unrefreshed
      expect(await bWait).toBeInstanceOf(CoordinationUnavailableError)
      await sleep(900) // time is the subject: past the ticket's life (a keeps renewing its own lease meanwhile)
      const cWait = c.acquireTurn('chat:dead')
      await queued('chat:dead', 'b', 'c')
      expect(held.held).toBe(true)
      await held.release()
      const turn = await cWait
      // Granted on a's release, the dead ticket skipped — not granted (it would have held the chat a lease).
      expect(turn.previousHolder?.replicaId).toBe('a')
      expect(await h.queue('chat:dead')).toEqual({ holder: 'c', queued: [], skipped: 1 })
      await turn.release()
    })

    it('a waiter that dies while its ticket is live lets the grant offered to it lapse: the chat moves on within the lease', async () => {
      const leaseMs = 1500
      const maxPollMs = 50
      const x = await replica({ replicaId: 'x', leaseMs, maxPollMs })
      const y = await replica({ replicaId: 'y', leaseMs, maxPollMs })
      const z = await replica({ replicaId: 'z', leaseMs, maxPollMs })
      const held = await x.acquireTurn('chat:dead-waiter')
      const yWait = y.acquireTurn('chat:dead-waiter').catch((e: unknown) => e)
      await queued('chat:dead-waiter', 'y')
      const zWait = z.acquireTurn('chat:dead-waiter', { waitMs: 10_000 })
      await queued('chat:dead-waiter', 'y', 'z')
      y.crash() // its ticket was polled a moment ago: still live when x releases
      const crashedAt = performance.now()
      expect(await yWait).toBeInstanceOf(CoordinationUnavailableError)
      await sleep(600)
      await held.release()
      const releasedAt = performance.now()
      const turn = await zWait
      const afterRelease = performance.now() - releasedAt
      // y was offered the turn and never took it up: the offer lapsed a lease after y's last take or
      // poll (as a dead holder's lease lapses a lease after its last renewal), and z's next poll was
      // granted — not a full lease (1.5 s) after the grant.
      expect(afterRelease).toBeLessThan(leaseMs * 0.8)
      expect(performance.now() - crashedAt).toBeLessThan(leaseMs + maxPollMs + 200)
      // y never served the chat: z's previous holder is x, who did.
      expect(turn.previousHolder?.replicaId).toBe('x')
      expect((await h.queue('chat:dead-waiter')).holder).toBe('z')
      await turn.release()
    })

    it('a turn released with served: false leaves previousHolder naming who last served the chat', async () => {
      const a = await replica({ replicaId: 'a' })
      const b = await replica({ replicaId: 'b' })
      const c = await replica({ replicaId: 'c' })
      await (await a.acquireTurn('chat:served')).release()
      // b's stale timer takes the turn, finds nothing to do, and says so.
      const stale = await b.acquireTurn('chat:served')
      expect(stale.previousHolder?.replicaId).toBe('a')
      await stale.release({ served: false })
      const next = await c.acquireTurn('chat:served')
      expect(next.previousHolder?.replicaId).toBe('a')
      await next.release()
      // Handed on at the release to a waiter: the same.
      const stale3 = await b.acquireTurn('chat:served')
      expect(stale3.previousHolder?.replicaId).toBe('c')
      const waiting = a.acquireTurn('chat:served')
      await queued('chat:served', 'a')
      await stale3.release({ served: false })
      const handed = await waiting
      expect(handed.previousHolder?.replicaId).toBe('c')
      // A turn that served is the previous holder as before.
      await handed.release()
      expect((await c.acquireTurn('chat:served')).previousHolder?.replicaId).toBe('a')
    })

    it('fails over after the holder dies: not before its lease ends, within leaseMs plus a poll', async () => {
      const leaseMs = 800
      const a = await replica({ replicaId: 'a', leaseMs, maxPollMs: 50 })
      const b = await replica({ replicaId: 'b', leaseMs, maxPollMs: 50 })
      const t1 = await a.acquireTurn('chat:failover')
      const grantedAt = performance.now()
      a.crash()
      const t2 = await b.acquireTurn('chat:failover')
      const took = performance.now() - grantedAt
      expect(took).toBeGreaterThanOrEqual(leaseMs - 100) // Redis's clock and ours differ by the round trip
      // Within the lease and a poll: the bound is generous (a loaded machine), but a waiter that stopped
      // polling would wait its whole waitMs (2 min) and break it.
      expect(took).toBeLessThan(3 * leaseMs)
      expect(t2.fence).toBeGreaterThan(t1.fence)
      await t2.release()
    })

    it('a holder that dies with its own next ticket queued does not stall the chat for a second lease', async () => {
      const leaseMs = 900
      const dying = await replica({ replicaId: 'dying', leaseMs, maxPollMs: 20 })
      const healthy = await replica({ replicaId: 'healthy', leaseMs, maxPollMs: 50 })
      await dying.acquireTurn('chat:dead-holder')
      const second = dying.acquireTurn('chat:dead-holder', { waitMs: 10_000 }).catch(() => null)
      await queued('chat:dead-holder', 'dying')
      const waiting = healthy.acquireTurn('chat:dead-holder', { waitMs: 10_000 })
      await queued('chat:dead-holder', 'dying', 'healthy')
      dying.crash()
      await second
      const t = await waiting
      // One lease, not two: the dead holder's own queued ticket was skipped with it, never granted.
      expect(await h.queue('chat:dead-holder')).toEqual({ holder: 'healthy', queued: [], skipped: 1 })
      expect(t.previousHolder?.replicaId).toBe('dying')
      await t.release()
    })

    it('gives up after waitMs, withdraws its ticket, and leaves the queue moving', async () => {
      const a = await replica({ replicaId: 'a' })
      const b = await replica({ replicaId: 'b' })
      const held = await a.acquireTurn('chat:timeout')
      const t0 = performance.now()
      const err = await b.acquireTurn('chat:timeout', { waitMs: 200 }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(CoordinationUnavailableError)
      expect((err as CoordinationUnavailableError).reason).toBe('timeout')
      expect(performance.now() - t0).toBeGreaterThanOrEqual(190)
      expect((await h.queue('chat:timeout')).queued).toEqual([]) // the ticket was withdrawn
      const next = b.acquireTurn('chat:timeout')
      await queued('chat:timeout', 'b')
      await held.release()
      const turn = await next // granted right after the release: the withdrawn ticket did not block it
      expect(turn.fence).toBeGreaterThan(held.fence)
      await turn.release()
    })

    it('an aborted wait rejects with reason aborted', async () => {
      const a = await replica({ replicaId: 'a' })
      const b = await replica({ replicaId: 'b' })
      const held = await a.acquireTurn('chat:abort')
      const ctl = new AbortController()
      const p = b.acquireTurn('chat:abort', { signal: ctl.signal }).catch((e: unknown) => e)
      await queued('chat:abort', 'b')
      ctl.abort()
      const err = await p
      expect(err).toBeInstanceOf(CoordinationUnavailableError)
      expect((err as CoordinationUnavailableError).reason).toBe('aborted')
      await held.release()
    })

    it('rejects with CoordinationUnavailableError when the shared state goes away mid-wait', async () => {
      const a = await replica({ replicaId: 'a', leaseMs: 900 })
      const b = await replica({ replicaId: 'b', leaseMs: 900 })
      const held = await a.acquireTurn('chat:outage')
      const lost: unknown[] = []
      a.on('coordination:lease-lost', (e) => lost.push(e))
      const wait = b.acquireTurn('chat:outage', { waitMs: 1500 }).catch((e: unknown) => e)
      await queued('chat:outage', 'b')
      const outage = await h.outage()
      try {
        const err = await wait
        expect(err).toBeInstanceOf(CoordinationUnavailableError)
        expect(['unreachable', 'timeout']).toContain((err as CoordinationUnavailableError).reason)
        // The holder could not renew: it dropped its turn locally before the lease could expire.
        expect(held.held).toBe(false)
        expect(() => held.assertHeld()).toThrow(LeaseLostError)
        expect(lost).toHaveLength(1)
      } finally {
        await outage.restore()
      }
    })

    it('a wait with Redis frozen ends at its waitMs, not a command timeout later', async () => {
      const a = await replica({ replicaId: 'a', leaseMs: 6000 })
      const b = await replica({ replicaId: 'b', leaseMs: 6000 })
      const held = await a.acquireTurn('chat:bounded')
      const outage = await h.outage()
      try {
        const from = performance.now()
        const err = await b.acquireTurn('chat:bounded', { waitMs: 1000 }).catch((e: unknown) => e)
        const took = performance.now() - from
        expect(err).toBeInstanceOf(CoordinationUnavailableError)
        expect(['unreachable', 'timeout']).toContain((err as CoordinationUnavailableError).reason)
        // Its poll could take 0.9 × the lease (5.4 s) before timing out on its own.
        expect(took).toBeLessThan(1000 + 400)
      } finally {
        await outage.restore()
      }
      await held.release()
    })

    it('a replica whose event loop was blocked past its lease knows at once that the turn is lost', async () => {
      const a = await replica({ replicaId: 'a', leaseMs: 600 })
      const turn: Turn = await a.acquireTurn('chat:frozen')
      blockEventLoop(700)
      // No timer has run since the freeze: assertHeld compares with the clock itself.
      expect(() => turn.assertHeld()).toThrow(LeaseLostError)
      expect(turn.signal.aborted).toBe(true)
      await turn.release()
    })

    it('a holder late to renew (frozen past half its lease, not past it) holds nothing until a renewal confirms the turn', async () => {
      const leaseMs = 1500 // renewals every 500 ms; late past 750 ms; the local deadline at 1350 ms
      const a = await replica({ replicaId: 'a', leaseMs })
      const turn: Turn = await a.acquireTurn('chat:late')
      const lost: string[] = []
      a.on('coordination:lease-lost', (e) => lost.push(e.reason))
      // Normal operation never reads late: held at every look across several renewals.
      let unheld = 0
      const sampler = setInterval(() => void (turn.held || unheld++), 5)
      await sleep(4 * (leaseMs / 3)) // time is the subject: four renewal intervals
      clearInterval(sampler)
      expect(unheld).toBe(0)
      await a.renewNow()
      blockEventLoop(0.6 * leaseMs)
      // No timer has run since the freeze: the last renewal Redis confirmed is late, so the turn may
      // have been given away meanwhile — unconfirmed, not lost.
      expect(turn.held).toBe(false)
      let err: unknown
      try {
        turn.assertHeld()
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(LeaseLostError)
      expect(err).toMatchObject({ code: 'ERR_LEASE_LOST', reason: 'unconfirmed', key: 'chat:late' })
      expect(turn.signal.aborted).toBe(false)
      await a.renewNow() // Redis confirms it: held again
      expect(turn.held).toBe(true)
      expect(() => turn.assertHeld()).not.toThrow()
      expect(lost).toEqual([])
      await turn.release()
    })

    it('a frozen child process (SIGSTOP past leaseMs, then SIGCONT) reports the turn lost', async (ctx) => {
      const target = h.childTarget()
      if (!target) return ctx.skip()
      const leaseMs = 1000
      const b = await replica({ replicaId: 'b', leaseMs, maxPollMs: 50 })
      const { child, next } = spawnTurnHolder([target.url, target.prefix, target.layout, 'chat:sigstop', String(leaseMs)])
      try {
        const granted = await next()
        expect(granted.granted).toBe(true)
        child.kill('SIGSTOP')
        const t = await b.acquireTurn('chat:sigstop', { waitMs: 10_000 })
        expect(t.fence).toBeGreaterThan(granted.fence as number)
        expect(t.previousHolder?.replicaId).toBe('frozen-child')
        child.kill('SIGCONT')
        child.stdin!.write('check\n')
        const check = await next()
        expect(check).toMatchObject({ held: false, error: 'ERR_LEASE_LOST', aborted: true })
        // Its late release must not take the turn away from the new holder.
        child.stdin!.write('release\n')
        expect(await next()).toEqual({ released: true })
        await b.renewNow()
        expect(t.held).toBe(true)
        child.stdin!.write('exit\n')
        await next()
        await t.release()
      } finally {
        child.kill('SIGKILL')
      }
    })

    it('refuses empty keys and works with keys that contain braces, colons, spaces and unicode', async () => {
      const a = await replica({ replicaId: 'a' })
      await expect(a.acquireTurn('')).rejects.toThrow(/non-empty/)
      for (const key of ['{x}', 'a}b{c', 'chat: with spaces', 'chat:ñandú 🐦', 'x'.repeat(1024), '%7B', '{', '}']) {
        const t = await a.acquireTurn(key)
        expect(t.held).toBe(true)
        await t.release()
      }
    })

    /**
     * Time is the subject here: the cut lasts until the client has given up the commands queued
     * while it was down (ioredis fails them after 3 reconnection attempts, well under a second), so
     * that nothing sent during the cut arrives after it — a lost link, not a slow one.
     */
    const outlastClientRetries = () => sleep(1000)

    /** A started replica whose link alone can be cut, or null where the harness cannot cut one. */
    const cuttable = async (options: CoordinatorOptions) => {
      const link = await h.linked({ leaseMs: 1500, maxPollMs: 50, ...options })
      if (!link) return null
      started.push(link.coordinator)
      await link.coordinator.start()
      return link
    }

    it('a ticket whose withdrawal failed (link cut as the wait was aborted) is withdrawn once Redis answers', async (ctx) => {
      const link = await cuttable({ replicaId: 'a' })
      if (!link) return ctx.skip()
      const a = link.coordinator
      const b = await replica({ replicaId: 'b' })
      const held = await b.acquireTurn('chat:withdraw')
      const abort = new AbortController()
      const wait = a.acquireTurn('chat:withdraw', { signal: abort.signal }).catch((e: unknown) => e)
      await queued('chat:withdraw', 'a')
      await link.cut()
      abort.abort()
      const err = await wait
      expect(err).toBeInstanceOf(CoordinationUnavailableError)
      expect((err as CoordinationUnavailableError).reason).toBe('aborted')
      await outlastClientRetries()
      link.restore()
      // Retried with the releases that failed: the ticket leaves the queue before anyone releases.
      await queued('chat:withdraw')
      await held.release()
      expect((await h.queue('chat:withdraw')).holder).toBeNull()
      const next = await a.acquireTurn('chat:withdraw')
      expect(next.previousHolder?.replicaId).toBe('b')
      await next.release()
    })

    it('a turn granted to a ticket whose withdrawal failed is passed on, and the next message of its replica is not dropped', async (ctx) => {
      // Leases long enough that the stale grant (granted with the releaser's leaseMs) still holds
      // the chat when a's link is back.
      const link = await cuttable({ replicaId: 'a', leaseMs: 3000 })
      if (!link) return ctx.skip()
      const a = link.coordinator
      const b = await replica({ replicaId: 'b', leaseMs: 3000 })
      const held = await b.acquireTurn('chat:withdraw-granted')
      const abort = new AbortController()
      const wait = a.acquireTurn('chat:withdraw-granted', { signal: abort.signal }).catch((e: unknown) => e)
      await queued('chat:withdraw-granted', 'a')
      await link.cut()
      abort.abort()
      expect(await wait).toBeInstanceOf(CoordinationUnavailableError)
      // Released while a is cut off: its ticket, still live, is granted to a replica that stopped waiting.
      await held.release()
      expect((await h.queue('chat:withdraw-granted')).holder).toBe('a')
      await outlastClientRetries()
      link.restore()
      // Left behind, that grant would run out a lease later with a presumed dead, and this ticket
      // (queued behind it) dropped with it. Passed on, it is granted.
      const next = await a.acquireTurn('chat:withdraw-granted', { waitMs: 10_000 })
      expect(next.held).toBe(true)
      await next.release()
    })

    it('a wait given up while its take-ticket was unanswered leaves no ticket behind', async (ctx) => {
      const link = await cuttable({ replicaId: 'a', leaseMs: 3000 })
      if (!link) return ctx.skip()
      const a = link.coordinator
      const b = await replica({ replicaId: 'b', leaseMs: 3000 })
      const held = await b.acquireTurn('chat:unanswered')
      link.loseReplies()
      const abort = new AbortController()
      const wait = a.acquireTurn('chat:unanswered', { signal: abort.signal }).catch((e: unknown) => e)
      // Its take ran (a retry after a lost reply finds the same ticket, not a second one); a never heard.
      await queued('chat:unanswered', 'a')
      await link.cut()
      abort.abort()
      const err = await wait
      expect(err).toBeInstanceOf(CoordinationUnavailableError)
      expect((err as CoordinationUnavailableError).reason).toBe('aborted')
      await outlastClientRetries()
      link.restore()
      // The withdrawal names the acquisition's request id and finds the ticket its take got.
      await queued('chat:unanswered')
      await held.release()
      expect((await h.queue('chat:unanswered')).holder).toBeNull()
      const next = await a.acquireTurn('chat:unanswered')
      expect(next.previousHolder?.replicaId).toBe('b')
      await next.release()
    })

    it('stop() releases held turns so a waiter gets them at once', async () => {
      const a = await replica({ replicaId: 'a' })
      const b = await replica({ replicaId: 'b' })
      await a.acquireTurn('chat:stop')
      const wait = b.acquireTurn('chat:stop')
      await queued('chat:stop', 'b')
      await a.stop()
      // Released by stop() itself, not left to expire: the release granted b's ticket in the same step.
      expect((await h.queue('chat:stop')).holder).toBe('b')
      const t = await wait
      await t.release()
      await expect(a.acquireTurn('chat:stop')).rejects.toBeInstanceOf(CoordinationUnavailableError)
    })
  })
}
