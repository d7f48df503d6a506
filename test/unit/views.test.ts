import { describe, expect, it } from 'vitest'
import type { ChatDetail, ChatSnapshot, LeadSnapshot, LockSnapshot, ReplicaSnapshot } from '../../src/index.js'
import { FENCE, NOW, chatDetail, chatState, holder, lead as leadState, replica, ticket } from '../helpers/snapshots.js'
import {
  chatRows,
  chatView,
  checkpointRows,
  explainChat,
  filterLeases,
  leadRow,
  leaseRows,
  lockRows,
  providerLeadName,
  replicaRow,
  sortLeases,
  staleTickets,
  zombieLeases,
} from '../../src/state/views.js'
import { shellWord } from '../../src/state/health.js'

const F = FENCE
const A = replica('pod-a', { incarnation: 'inc-a' })
const B = replica('pod-b', { incarnation: 'inc-b' })

describe('replica rows', () => {
  it('carry the waiting counts of the last beat; a record older than them reads none waited, none shed', () => {
    const now = replica('pod-a', { stats: { turnsGranted: 9, waitingNow: 3, oldestWaitMs: 4100, turnsShed: 2 } })
    expect(replicaRow(now, NOW)).toMatchObject({ turnsGranted: 9, turnsShed: 2, waitingNow: 3, oldestWaitMs: 4100 })
    const older = replica('pod-b', { stats: { turnsGranted: 9, waitingNow: 0 } }) // written before oldestWaitMs and turnsShed existed
    expect('oldestWaitMs' in older.stats || 'turnsShed' in older.stats).toBe(false)
    expect(replicaRow(older, NOW)).toMatchObject({ turnsGranted: 9, turnsShed: 0, waitingNow: 0, oldestWaitMs: null })
  })
})

describe('lease rows', () => {
  const lead = (key: string, h: LeadSnapshot['holder']) => leadState(key, h, { fence: F + 1 })
  const lock: LockSnapshot = {
    key: 'invoice:run',
    fence: F + 2,
    holder: { owner: 'h-pod-b:10', expiresAtMs: NOW + 30_000, acquiredAtMs: NOW - 100 },
    releasedAtMs: null,
  }
  const rows = leaseRows(
    {
      chats: [
        chatState('chat:1', { holder: holder('pod-a', { incarnation: 'inc-a' }) }),
        chatState('chat:idle'),
        chatState('chat:z', { holder: holder('pod-gone', { incarnation: 'x', expiresInMs: 3000 }) }),
      ],
      leads: [
        lead('provider:wa', {
          replicaId: 'pod-b',
          incarnation: 'inc-b',
          expiresAtMs: NOW + 9000,
          sinceMs: NOW - 100,
          lastRenewalMs: NOW - 50,
        }),
        lead('scheduler:report', {
          replicaId: 'pod-a',
          incarnation: 'old-inc',
          expiresAtMs: NOW - 10,
          sinceMs: NOW - 100,
          lastRenewalMs: NOW - 50,
        }),
        lead('job:x', null),
      ],
      locks: [lock, { key: 'free', fence: 1, holder: null, releasedAtMs: NOW - 5 }],
      replicas: [A, B],
    },
    NOW,
  )

  it('has one row per held lease with the runtime name, kind, holder, fence and time left from Redis now', () => {
    expect(rows.map((r) => [r.kind, r.key])).toEqual([
      ['chat', 'chat:1'],
      ['chat', 'chat:z'],
      ['provider', 'provider:wa'],
      ['scheduler', 'scheduler:report'],
      ['lock', 'invoice:run'],
    ])
    expect(rows[0]).toEqual({
      kind: 'chat',
      key: 'chat:1',
      replicaId: 'pod-a',
      incarnation: 'inc-a',
      owner: null,
      fence: F,
      expiresInMs: 10_000,
      state: 'ok',
      reason: "holder pod-a renews (last 1s ago); the turn's lease ends in 10s",
      lastRenewalAgoMs: 1000,
      renewMs: 5000,
      renewalOverdueMs: 0,
      heldForMs: 5000,
      holderAlive: true,
    })
  })

  it('a turn granted after the reader read Redis\'s clock: renewed and held "just now" (0), never in the future', () => {
    const [row] = leaseRows(
      {
        chats: [chatState('chat:new', { holder: holder('pod-a', { incarnation: 'inc-a', heldForMs: -1, lastRenewalMs: NOW + 1 }) })],
        leads: [],
        locks: [],
        replicas: [A],
      },
      NOW,
    )
    expect(row).toMatchObject({ lastRenewalAgoMs: 0, heldForMs: 0 })
  })

  it('knows dead and restarted holders, and maps a lock owner host:pid to its replica', () => {
    const by = Object.fromEntries(rows.map((r) => [r.key, r]))
    expect(by['chat:z']).toMatchObject({ holderAlive: false, state: 'dead' })
    // pod-a beats with another incarnation; the lease itself ran out already
    expect(by['scheduler:report']).toMatchObject({ holderAlive: false, state: 'expired' })
    expect(by['invoice:run']).toMatchObject({
      replicaId: 'pod-b',
      incarnation: 'inc-b',
      owner: 'h-pod-b:10',
      holderAlive: true,
      lastRenewalAgoMs: null,
    })
  })

  it('filters by kind, replica, expiring-within and stale; sorts', () => {
    expect(filterLeases(rows, { kinds: ['provider', 'lock'] }).map((r) => r.key)).toEqual(['provider:wa', 'invoice:run'])
    expect(filterLeases(rows, { replicaId: 'pod-a' }).map((r) => r.key)).toEqual(['chat:1', 'scheduler:report'])
    expect(filterLeases(rows, { expiringWithinMs: 5000 }).map((r) => r.key)).toEqual(['chat:z', 'scheduler:report'])
    expect(filterLeases(rows, { stale: true }).map((r) => r.key)).toEqual(['chat:z', 'scheduler:report'])
    expect(sortLeases(rows, 'expires')[0]!.key).toBe('scheduler:report')
    expect(sortLeases(rows, 'fence').at(-1)!.key).toBe('invoice:run')
    expect(zombieLeases(rows).map((r) => r.key)).toEqual(['chat:z']) // scheduler:report already expired
  })
})

describe('chat rows', () => {
  it('lists chats with a holder or a queue, with queue length, oldest wait and stale tickets', () => {
    const rows = chatRows(
      [
        chatState('idle'),
        chatState('busy', {
          holder: holder('pod-a', { incarnation: 'inc-a' }),
          tickets: [
            ticket(2, 'pod-b', { incarnation: 'inc-b', deadlineInMs: 9000, waitedMs: 3000 }),
            ticket(3, 'pod-x', { incarnation: 'gone', deadlineInMs: 9000, waitedMs: 1000 }),
          ],
        }),
        chatState('orphan-queue', { tickets: [ticket(5, 'pod-b', { incarnation: 'inc-b', deadlineInMs: 9000, waitedMs: 500 })] }),
      ],
      [A, B],
      NOW,
    )
    expect(rows.map((r) => r.key)).toEqual(['busy', 'orphan-queue'])
    expect(rows[0]).toMatchObject({
      kind: 'chat',
      replicaId: 'pod-a',
      incarnation: 'inc-a',
      fence: F,
      expiresInMs: 10_000,
      queueLength: 2,
      oldestWaitMs: 3000,
      staleTickets: 1,
      holderAlive: true,
    })
    expect(rows[1]).toMatchObject({
      replicaId: null,
      incarnation: null,
      expiresInMs: null,
      queueLength: 1,
      oldestWaitMs: 500,
      staleTickets: 0,
    })
    expect(staleTickets([chatState('busy', { tickets: [ticket(3, 'pod-x', { incarnation: 'gone' })] })], [A], NOW)).toEqual([
      { key: 'busy', ticket: 3, replicaId: 'pod-x', incarnation: 'gone', state: 'dead', waitedMs: 2000 },
    ])
  })
})

describe('chat inspect --explain', () => {
  const explain = (c: ChatSnapshot | null, replicas: ReplicaSnapshot[], extra: Partial<ChatDetail> = {}, fingerprint?: string) =>
    explainChat(chatView(chatDetail(c, extra), replicas, c?.key ?? 'chat:none'), { fingerprint })

  it('ok when a live holder has the turn', () => {
    const e = explain(
      chatState('chat:1', { holder: holder('pod-a', { incarnation: 'inc-a' }), tickets: [ticket(2, 'pod-b', { incarnation: 'inc-b' })] }),
      [A, B],
    )
    expect(e.verdict).toBe('ok')
    expect(e.findings).toEqual([])
  })

  it('stuck: holder dead but its lease has not expired — names the wait and the fix', () => {
    const e = explain(
      chatState('chat:1', {
        holder: holder('pod-gone', { incarnation: 'x', expiresInMs: 8000 }),
        tickets: [ticket(2, 'pod-b', { incarnation: 'inc-b' })],
      }),
      [B],
    )
    expect(e.verdict).toBe('stuck')
    expect(e.findings[0]).toMatchObject({ code: 'holder-dead', severity: 'problem', fix: expect.stringContaining('chat release chat:1') })
    expect(e.findings[0]!.message).toMatch(/8s more/)
  })

  it('stuck: the holder restarted (same replicaId, new incarnation)', () => {
    const e = explain(chatState('chat:1', { holder: holder('pod-a', { incarnation: 'old' }) }), [A])
    expect(e.findings.map((f) => f.code)).toEqual(['holder-stale-incarnation'])
  })

  it('a dead or stale ticket at the head: blocks until its deadline, then skipped', () => {
    const blocking = explain(
      chatState('chat:1', {
        tickets: [ticket(4, 'pod-a', { incarnation: 'old', deadlineInMs: 5000 }), ticket(5, 'pod-b', { incarnation: 'inc-b' })],
      }),
      [A, B],
    )
    expect(blocking.verdict).toBe('stuck')
    expect(blocking.findings[0]).toMatchObject({
      code: 'head-ticket-stale',
      severity: 'problem',
      fix: expect.stringMatching(/^botmesh-coord chat skip chat:1 4( --if-fence \d+)?$/),
    })
    const passed = explain(chatState('chat:1', { tickets: [ticket(4, 'pod-x', { incarnation: 'gone', deadlineInMs: -100 })] }), [A])
    expect(passed.findings[0]).toMatchObject({ code: 'head-ticket-dead', severity: 'warning' })
    expect(passed.verdict).toBe('attention')
  })

  it('a queue without holder whose live head does not take the turn', () => {
    const e = explain(
      chatState('chat:1', { tickets: [ticket(4, 'pod-b', { incarnation: 'inc-b', deadlineInMs: 9000, waitedMs: 30_000 })] }),
      [B],
    )
    expect(e.findings[0]).toMatchObject({ code: 'queue-without-holder', severity: 'problem' })
    expect(
      explain(chatState('chat:1', { tickets: [ticket(4, 'pod-b', { incarnation: 'inc-b', deadlineInMs: 9000, waitedMs: 20 })] }), [B])
        .verdict,
    ).toBe('ok')
  })

  it('checkpoint fences: older than the holder (info), newer than the chat (problem); fingerprint mismatch only with --fingerprint', () => {
    const cp = (fence: number, ephemeral: { ttlMs: number; fingerprint: string } | null = null) => ({
      key: 'chat:1',
      flow: 'order',
      step: 'address',
      state: {},
      revision: 7,
      owner: { replicaId: 'pod-b', incarnation: 'inc-b', fence },
      // Written before the holder's grant (5 s ago): by the turn before it.
      updatedAt: NOW - 9000,
      ephemeral,
      answer: null,
      answerBytes: 0,
    })
    const c = chatState('chat:1', { holder: holder('pod-a', { incarnation: 'inc-a' }) })
    expect(explain(c, [A, B], { checkpoint: cp(F - 5) }).findings.map((f) => [f.code, f.severity])).toEqual([
      ['checkpoint-older-fence', 'info'],
    ])
    const newer = explain(c, [A, B], { checkpoint: cp(F + 5) })
    expect(newer.verdict).toBe('stuck')
    expect(newer.findings[0]!.code).toBe('checkpoint-newer-fence')
    const eph = cp(F, { ttlMs: 60_000, fingerprint: 'abc' })
    expect(explain(c, [A, B], { checkpoint: eph }).findings.map((f) => f.code)).toEqual(['fingerprint-unchecked'])
    expect(explain(c, [A, B], { checkpoint: eph }, 'abc').findings).toEqual([])
    const mism = explain(c, [A, B], { checkpoint: eph }, 'def')
    expect(mism.findings[0]).toMatchObject({ code: 'fingerprint-mismatch', severity: 'problem' })
  })

  it('with nothing added by a checkpoint or a handover marker, says what chat ls says: the same state, for the same reason', () => {
    const chats = [
      chatState('chat:ok', { holder: holder('pod-a', { incarnation: 'inc-a' }) }),
      chatState('chat:dead', { holder: holder('pod-gone', { incarnation: 'x' }), tickets: [ticket(2, 'pod-b', { incarnation: 'inc-b' })] }),
      chatState('chat:late', { holder: holder('pod-a', { incarnation: 'inc-a', lastRenewalMs: NOW - 9000, expiresInMs: 6000 }) }),
      chatState('chat:expired', { holder: holder('pod-a', { incarnation: 'inc-a', expiresInMs: -500 }) }),
      chatState('chat:head', { tickets: [ticket(4, 'pod-x', { incarnation: 'gone', deadlineInMs: -100 })] }),
      chatState('chat:queue', { tickets: [ticket(4, 'pod-b', { incarnation: 'inc-b', deadlineInMs: 9000, waitedMs: 30_000 })] }),
      chatState('chat:idle'),
    ]
    const states = chats.map((c) => {
      const view = chatView(chatDetail(c), [A, B], c.key)
      const e = explainChat(view)
      expect(e.verdict).toBe(view.state)
      expect(e.summary.endsWith(view.reason)).toBe(true)
      return e.verdict
    })
    expect(states).toEqual(['ok', 'stuck', 'late', 'expired', 'attention', 'stuck', 'idle'])
  })

  it('idle and unknown chats', () => {
    expect(explain(chatState('chat:1', { lastHolder: { replicaId: 'pod-a', incarnation: 'i' } }), [A]).verdict).toBe('idle')
    expect(explain(null, [A]).verdict).toBe('unknown')
  })
})

describe('providers, locks, checkpoints', () => {
  it('a provider row: leader, standbys other than the leader, a pending yield, vacancy', () => {
    const l: LeadSnapshot = {
      key: 'provider:wa',
      fence: F,
      holder: { replicaId: 'pod-a', incarnation: 'inc-a', expiresAtMs: NOW + 5000, sinceMs: NOW - 60_000, lastRenewalMs: NOW - 10 },
      previousHolder: { replicaId: 'pod-b', incarnation: 'inc-b' },
      lastHolder: null,
      transportDown: null,
      releasedAtMs: null,
      lastHandoverMs: 120,
      lastHandoverHow: 'released',
      lastHandoverBy: null,
      letGoHow: null,
      letGoBy: null,
      yieldRequest: { by: 'ops@h', target: 'pod-b', expiresAtMs: NOW + 20_000, requestedAtMs: NOW - 1000 },
      candidates: [
        { replicaId: 'pod-a', incarnation: 'inc-a', deadlineMs: NOW + 9000 },
        { replicaId: 'pod-b', incarnation: 'inc-b', deadlineMs: NOW + 9000 },
        { replicaId: 'pod-c', incarnation: 'lapsed', deadlineMs: NOW - 1 },
      ],
      candidateCount: 3,
    }
    const r = leadRow(l, [A, B], NOW)
    expect(r).toMatchObject({
      kind: 'provider',
      key: 'provider:wa',
      replicaId: 'pod-a',
      fence: F,
      expiresInMs: 5000,
      leadingForMs: 60_000,
      lastHandoverMs: 120,
      pendingYield: { by: 'ops@h', target: 'pod-b', expiresInMs: 20_000, requestedAgoMs: 1000 },
      standbys: [{ replicaId: 'pod-b', incarnation: 'inc-b', alive: true, deadlineInMs: 9000 }],
    })
    const vacant = leadRow({ ...l, holder: null, releasedAtMs: NOW - 3000, yieldRequest: null }, [B], NOW)
    expect(vacant).toMatchObject({ replicaId: null, expiresInMs: null, vacantForMs: 3000, pendingYield: null })
  })

  it('bare provider names', () => {
    expect(providerLeadName('whatsapp')).toBe('provider:whatsapp')
    expect(providerLeadName('provider:whatsapp')).toBe('provider:whatsapp')
  })

  it('lock rows: held, free, owner mapping', () => {
    const rows = lockRows(
      [
        { key: 'b', fence: 2, holder: { owner: 'elsewhere:1', expiresAtMs: NOW - 1, acquiredAtMs: NOW - 10 }, releasedAtMs: null },
        { key: 'a', fence: 1, holder: { owner: 'h-pod-a:10', expiresAtMs: NOW + 100, acquiredAtMs: NOW - 10 }, releasedAtMs: null },
      ],
      [A],
      NOW,
    )
    expect(rows.map((r) => [r.key, r.held, r.replicaId, r.holderAlive])).toEqual([
      ['a', true, 'pod-a', true],
      ['b', false, null, null],
    ])
  })

  it('checkpoint rows and filters', () => {
    const base = { flow: 'order', step: 's', state: {}, revision: 1, owner: null, updatedAt: NOW - 1000, answer: null, answerBytes: 0 }
    const cps = [
      { ...base, key: 'x', ephemeral: { ttlMs: 60_000, fingerprint: 'fp' } },
      { ...base, key: 'y', flow: 'signup', ephemeral: null },
    ]
    expect(checkpointRows(cps, [], NOW, { ephemeral: true })).toEqual([
      expect.objectContaining({ key: 'x', ephemeral: true, expiresInMs: 59_000, fingerprint: 'fp', kind: 'checkpoint' }),
    ])
    expect(checkpointRows(cps, [], NOW, { flow: 'signup' }).map((r) => r.key)).toEqual(['y'])
  })

  it('shell quoting for suggested commands', () => {
    expect(shellWord('chat:42')).toBe('chat:42')
    expect(shellWord("it's x")).toBe(`'it'\\''s x'`)
  })
})
