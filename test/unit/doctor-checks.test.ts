/**
 * Doctor's pure side (src/state/doctor/): the checks in report order, and the folds that keep counts
 * and the first examples instead of every row — fed batch by batch they end as the whole listing would.
 */
import { describe, expect, it } from 'vitest'
import { ChatTurns, CheckpointFold, DOCTOR_CHECKS, Worst, folding, FOLD_BATCH } from '../../src/state/doctor/index.js'
import type { ChatSnapshot, FlowCheckpoint } from '../../src/state/decode.js'

describe('doctor checks', () => {
  it('are named units, in the order of the report, each id once', () => {
    expect(DOCTOR_CHECKS.map((c) => c.id)).toEqual([
      'redis-version',
      'eviction-policy',
      'memory',
      'persistence',
      'failover',
      'cluster',
      'schema',
      'layout',
      'nested-prefix',
      'corrupt',
      'replicas',
      'clock-skew',
      'stale-tickets',
      'late-renewals',
      'expired-leases',
      'zombie-leases',
      'transports',
      'stale-writes',
      'flow-versions',
    ])
    for (const c of DOCTOR_CHECKS) expect(c.title.length).toBeGreaterThan(5)
  })
})

describe('doctor folds', () => {
  it('Worst keeps the first k by an order, stable among equals, as sort-then-slice would', () => {
    let seed = 7
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31)
    for (let round = 0; round < 50; round++) {
      const xs = Array.from({ length: Math.floor(rnd() * 40) }, (_, i) => ({ v: Math.floor(rnd() * 5), i }))
      const order = (a: { v: number }, b: { v: number }) => a.v - b.v
      const w = new Worst(3, order)
      for (const x of xs) w.add(x)
      expect(w.count).toBe(xs.length)
      expect(w.items).toEqual([...xs].sort(order).slice(0, 3))
      const first = new Worst<{ v: number; i: number }>(3)
      for (const x of xs) first.add(x)
      expect(first.items).toEqual(xs.slice(0, 3))
    }
  })

  it('folding hands every decoded item over, in order, in batches, and keeps none', () => {
    const seen: number[][] = []
    const f = folding(
      (id) => (id === 'skip' ? null : Number(id)),
      (batch) => seen.push([...batch]),
    )
    const n = FOLD_BATCH * 2 + 5
    for (let i = 0; i < n; i++) expect(f.decode(i % 10 === 9 ? 'skip' : String(i), 'k', {})).toBeNull()
    f.flush()
    const kept = Array.from({ length: n }, (_, i) => i).filter((i) => i % 10 !== 9)
    expect(seen.map((b) => b.length)).toEqual([FOLD_BATCH, kept.length - FOLD_BATCH])
    expect(seen.flat()).toEqual(kept)
  })

  it("ChatTurns gives back each chat's fence and holders (the last write of a key wins), past its first growth", () => {
    const turns = new ChatTurns()
    const chat = (i: number): ChatSnapshot => ({
      key: `chat:${i}`,
      fence: i % 7 ? 1_700_000_000_000_000 + i : null,
      holder:
        i % 3
          ? {
              replicaId: `pod-${i % 4}`,
              incarnation: `inc${i % 4}`,
              ticket: 1,
              expiresAtMs: 5,
              grantedAtMs: 1000 + i,
              lastRenewalMs: 4,
              waitedMs: null,
              offered: false,
            }
          : null,
      previousHolder: i % 5 ? { replicaId: `pod-${i % 2}`, incarnation: 'x' } : null,
      lastHolder: { replicaId: 'pod-z', incarnation: `y${i % 3}` },
      lastTicket: 1,
      skippedTickets: 0,
      tickets: [],
      queued: 0,
    })
    for (let i = 0; i < 3000; i++) turns.add(chat(i))
    turns.add({ ...chat(5), fence: 42 })
    expect(turns.take('chat:nope')).toBeNull()
    for (const i of [0, 1, 2, 5, 7, 1024, 2999]) {
      const c = i === 5 ? { ...chat(5), fence: 42 } : chat(i)
      expect(turns.take(c.key)).toEqual({
        fence: c.fence,
        holder: c.holder && { replicaId: c.holder.replicaId, incarnation: c.holder.incarnation, grantedAtMs: c.holder.grantedAtMs },
        previousHolder: c.previousHolder,
        lastHolder: c.lastHolder,
      })
    }
  })

  it('CheckpointFold judges each checkpoint against its chat whichever of the two is read first, keeping only the first of a pair', () => {
    const n = 3000
    const chat = (i: number): ChatSnapshot => ({
      key: `chat:${i}`,
      fence: 500 + i,
      holder: {
        replicaId: 'pod-a',
        incarnation: 'inc-a',
        ticket: 1,
        expiresAtMs: 9000,
        grantedAtMs: 1000,
        lastRenewalMs: 1000,
        waitedMs: null,
        offered: false,
      },
      previousHolder: null,
      lastHolder: { replicaId: 'pod-a', incarnation: 'inc-a' },
      lastTicket: 1,
      skippedTickets: 0,
      tickets: [],
      queued: 0,
    })
    // Every third checkpoint was written after the grant by another replica: a stale write. Every
    // fifth has no owner (nothing to judge); chat:0's checkpoint has no chat at all.
    const cp = (i: number): FlowCheckpoint => ({
      key: `chat:${i}`,
      flow: 'order',
      step: 'address',
      state: null,
      revision: 7 + i,
      owner: i % 5 === 4 ? null : { replicaId: i % 3 ? 'pod-a' : 'pod-b', incarnation: i % 3 ? 'inc-a' : 'inc-b', fence: 500 + i },
      updatedAt: 2000,
      ephemeral: null,
      answer: null,
      answerBytes: 0,
    })
    const expected = Array.from({ length: n }, (_, i) => i).filter((i) => i > 0 && i % 3 === 0 && i % 5 !== 4).length
    const items = [
      ...Array.from({ length: n - 1 }, (_, i) => ({ chat: chat(i + 1) })),
      ...Array.from({ length: n }, (_, i) => ({ cp: cp(i) })),
    ]
    let seed = 7
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const shuffled = [...items].sort(() => rand() - 0.5)
    for (const order of [items, [...items].reverse(), shuffled]) {
      const fold = new CheckpointFold(null)
      let most = 0
      for (let i = 0; i < order.length; i += 100) {
        const batch = order.slice(i, i + 100)
        fold.chats(batch.flatMap((x) => ('chat' in x ? [x.chat] : [])))
        fold.add(batch.flatMap((x) => ('cp' in x ? [x.cp] : [])))
        most = Math.max(most, fold.pending)
      }
      expect(fold.checked).toBe(n)
      expect(fold.stale.count).toBe(expected)
      expect(fold.stale.items.every((w) => w.reason === 'another-holder' && w.replicaId === 'pod-b')).toBe(true)
      // Left over: chat:0's checkpoint (no chat), and the chats whose checkpoint has no owner.
      expect(fold.pending).toBe(1 + Math.floor(n / 5))
      if (order === shuffled) expect(most).toBeLessThan(n)
    }
  })

  it('ChatTurns.take gives a turn back once, then no longer has it', () => {
    const turns = new ChatTurns()
    const c = (i: number): ChatSnapshot => ({
      key: `chat:${i}`,
      fence: i,
      holder: null,
      previousHolder: null,
      lastHolder: { replicaId: 'pod', incarnation: `inc${i}` },
      lastTicket: 0,
      skippedTickets: 0,
      tickets: [],
      queued: 0,
    })
    for (let i = 0; i < 2000; i++) {
      turns.add(c(i))
      expect(turns.take(`chat:${i}`)).toEqual({
        fence: i,
        holder: null,
        previousHolder: null,
        lastHolder: { replicaId: 'pod', incarnation: `inc${i}` },
      })
      expect(turns.take(`chat:${i}`)).toBeNull()
    }
    expect(turns.size).toBe(0)
  })
})
