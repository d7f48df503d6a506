import { describe, expect, it } from 'vitest'
import { BACKLOG_WAIT_MS, GONE_SHOWN_MS, advance, eventRow, filterChats, needsAttention, streamIdMs } from '../../commands/tui/model.js'
import { allocate, fitColumns, windowStart } from '../../commands/tui/layout.js'
import { NOW, chatState, dashboard, dashboardChat, holder, incarnationOf, lead, replica, ticket } from '../helpers/snapshots.js'
import { providerCells } from '../../commands/tui/components/providers-panel.js'
import { chatCells } from '../../commands/tui/components/chats-panel.js'

describe('dashboard model', () => {
  it('computes turns per second between heartbeats and keeps it until the next beat', () => {
    const m1 = advance(null, dashboard({ replicas: [replica('a', { turnsGranted: 100, beatAtMs: NOW - 5000 })] }), {
      sampledAtMs: 0,
      commandsTotal: 9,
    })
    expect(m1.replicas[0]!.turnsPerSec).toBeNull()
    const m2 = advance(m1, dashboard({ nowMs: NOW + 1000, replicas: [replica('a', { turnsGranted: 150, beatAtMs: NOW })] }), {
      sampledAtMs: 1000,
      commandsTotal: 18,
    })
    expect(m2.replicas[0]!.turnsPerSec).toBe(10) // 50 turns in 5 s of heartbeats
    const m3 = advance(m2, dashboard({ nowMs: NOW + 2000, replicas: [replica('a', { turnsGranted: 150, beatAtMs: NOW })] }), {
      sampledAtMs: 2000,
      commandsTotal: 27,
    })
    expect(m3.replicas[0]!.turnsPerSec).toBe(10) // same beat: the rate stays
    expect(m3.commandsPerSec).toBe(9)
    // A restarted replica (new incarnation) starts a new series.
    const m4 = advance(
      m3,
      dashboard({ nowMs: NOW + 3000, replicas: [replica('a', { incarnation: 'new', turnsGranted: 1, beatAtMs: NOW + 3000 })] }),
      { sampledAtMs: 3000, commandsTotal: 36 },
    )
    expect(m4.replicas[0]!.turnsPerSec).toBeNull()
  })

  it('carries the oldest wait of the last beat; a minute of it needs attention while the replica is live', () => {
    const snap = (oldestWaitMs: number | null, nowMs = NOW) =>
      dashboard({
        nowMs,
        replicas: [replica('a', { stats: { waitingNow: 3, oldestWaitMs } }), replica('b')],
        providers: [],
        chats: [],
        expiring: [],
      })
    const m1 = advance(null, snap(BACKLOG_WAIT_MS - 1), { sampledAtMs: 0, commandsTotal: 0 })
    expect(m1.replicas.map((r) => [r.replicaId, r.waitingNow, r.oldestWaitMs])).toEqual([
      ['a', 3, BACKLOG_WAIT_MS - 1],
      ['b', 0, null], // an older replica's record: no oldestWaitMs
    ])
    expect(needsAttention(m1)).toEqual([])
    const m2 = advance(m1, snap(BACKLOG_WAIT_MS), { sampledAtMs: 1000, commandsTotal: 0 })
    expect(needsAttention(m2)).toEqual(['1 replica(s) with a message waiting over 1m'])
    // Gone, its last beat's wait is history: it is flagged as gone, not as a backlog.
    const m3 = advance(m2, dashboard({ nowMs: NOW + 1000, replicas: [replica('b')], providers: [], chats: [], expiring: [] }), {
      sampledAtMs: 2000,
      commandsTotal: 0,
    })
    expect(needsAttention(m3)).toEqual(['1 replica(s) late or gone'])
  })

  it('marks a late heartbeat and keeps a vanished replica on screen as gone for a while', () => {
    const m1 = advance(null, dashboard({ replicas: [replica('a'), replica('b', { beatAgo: 9000 })] }), { sampledAtMs: 0, commandsTotal: 0 })
    expect(m1.replicas.map((r) => [r.replicaId, r.status])).toEqual([
      ['a', 'ok'],
      ['b', 'late'],
    ])
    const m2 = advance(m1, dashboard({ nowMs: NOW + 1000, replicas: [replica('a')] }), { sampledAtMs: 1000, commandsTotal: 0 })
    expect(m2.replicas.map((r) => [r.replicaId, r.status])).toEqual([
      ['a', 'ok'],
      ['b', 'gone'],
    ])
    expect(m2.replicas[1]!.goneForMs).toBe(0)
    const m3 = advance(m2, dashboard({ nowMs: NOW + 1000 + GONE_SHOWN_MS - 1, replicas: [replica('a')] }), {
      sampledAtMs: 2000,
      commandsTotal: 0,
    })
    expect(m3.replicas.find((r) => r.replicaId === 'b')).toMatchObject({ status: 'gone', goneForMs: GONE_SHOWN_MS - 1 })
    const m4 = advance(m3, dashboard({ nowMs: NOW + 1000 + GONE_SHOWN_MS, replicas: [replica('a')] }), {
      sampledAtMs: 3000,
      commandsTotal: 0,
    })
    expect(m4.replicas.map((r) => r.replicaId)).toEqual(['a'])
    // It comes back: live again, not listed twice.
    const m5 = advance(m2, dashboard({ nowMs: NOW + 2000, replicas: [replica('a'), replica('b')] }), {
      sampledAtMs: 3000,
      commandsTotal: 0,
    })
    expect(m5.replicas.map((r) => [r.replicaId, r.status])).toEqual([
      ['a', 'ok'],
      ['b', 'ok'],
    ])
  })

  it('builds provider rows: leader, standbys, pending yield, last handover and its duration', () => {
    const m = advance(
      null,
      dashboard({
        providers: [
          lead('provider:wa', 'b', {
            previousHolder: { replicaId: 'a', incarnation: 'x' },
            lastHandoverMs: 340,
            yieldRequest: { by: 'ops@h', target: null, expiresAtMs: NOW + 20_000, requestedAtMs: NOW - 1000 },
            candidates: [
              { replicaId: 'a', incarnation: 'a-inc', deadlineMs: NOW + 1 },
              { replicaId: 'b', incarnation: 'b-inc-0123456789', deadlineMs: NOW + 1 },
            ],
          }),
          lead('provider:tg', null, { releasedAtMs: NOW - 4000 }),
        ],
      }),
      { sampledAtMs: 0, commandsTotal: 0 },
    )
    expect(m.providers[0]).toMatchObject({
      leader: 'b',
      standbys: ['a'],
      lastHandover: { agoMs: 60_000, tookMs: 340 },
      leadingForMs: 60_000,
    })
    expect(m.providers[0]!.pendingYield).toMatch(/any standby, by ops@h, 20s left/)
    expect(m.providers[1]).toMatchObject({ leader: null, leaderlessForMs: 4000, lastHandover: null })
  })

  it('a late leader and a late holder stand out (the health model decides)', () => {
    const frozen = { lastRenewalMs: NOW - 9000 } // every 5 s: late past 7.5 s
    const m = advance(
      null,
      dashboard({
        providers: [
          lead('provider:wa', {
            replicaId: 'pod-a',
            incarnation: incarnationOf('pod-a'),
            expiresAtMs: NOW + 6000,
            sinceMs: NOW - 60_000,
            ...frozen,
          }),
        ],
        chats: [
          dashboardChat('chat:1', null, [], {
            chat: chatState('chat:1', { holder: holder('pod-a', frozen), tickets: [ticket(2, 'pod-b')] }),
          }),
        ],
      }),
      { sampledAtMs: 0, commandsTotal: 0 },
    )
    expect(m.providers[0]!.state).toBe('late')
    expect(providerCells(m.providers[0]!).leader).toMatchObject({ text: 'pod-a late', tone: 'warn' })
    expect(m.chats[0]).toMatchObject({ state: 'stuck', holderLate: true })
    expect(chatCells(m.chats[0]!).holder).toMatchObject({ text: 'pod-a late', tone: 'warn' })
    expect(m.chats[0]!.stuck[0]).toMatch(/^holder pod-a has not renewed for 9s \(every 5s\)/)
  })

  it('turns chats into rows and filters them by key or replica', () => {
    const m = advance(
      null,
      dashboard({
        chats: [
          dashboardChat('chat:1', 'a', ['b', 'c'], {
            stuck: ['dead ticket at the head'],
            checkpoint: { flow: 'order', step: 'address', ephemeral: true },
          }),
          dashboardChat('chat:2', 'b'),
        ],
      }),
      { sampledAtMs: 0, commandsTotal: 0 },
    )
    expect(m.chats[0]).toMatchObject({
      key: 'chat:1',
      holder: 'a',
      queueLength: 2,
      leaseLeftMs: 8000,
      checkpoint: '~order/address',
      replicas: ['a', 'b', 'c'],
    })
    expect(filterChats(m.chats, 'chat:2').map((c) => c.key)).toEqual(['chat:2'])
    expect(filterChats(m.chats, 'C').map((c) => c.key)).toEqual(['chat:1', 'chat:2']) // case-insensitive, key match
    expect(filterChats(m.chats, 'xyz')).toEqual([])
    expect(filterChats(m.chats, ' ').length).toBe(2)
  })

  it('describes events in the seed words, interventions with their reason, newest first', () => {
    expect(streamIdMs('1700000000123-4')).toBe(1700000000123)
    expect(eventRow('1-0', { type: 'leader', replicaId: 'b', name: 'provider:wa', fence: 7, previous: 'a' }).text).toBe(
      'b leads provider:wa (fence 7, after a)',
    )
    expect(eventRow('1-0', { type: 'lease-lost', replicaId: 'a', kind: 'chat', key: 'chat:1', reason: 'revoked' })).toMatchObject({
      text: 'a lost chat chat:1: revoked',
      tone: 'bad',
    })
    expect(
      eventRow('1-0', {
        type: 'intervention',
        command: 'chat release chat:1',
        result: 'released',
        by: 'ops@h',
        reason: 'stuck since deploy',
      }),
    ).toMatchObject({ text: '"chat release chat:1" by ops@h: released; reason "stuck since deploy"', tone: 'operator' })
    // An intervention sent without an answer, and one applied whole with its wake-up refused.
    expect(
      eventRow('1-0', {
        type: 'intervention',
        command: 'chat release chat:1 --if-fence 17',
        result: 'unknown',
        changed: null,
        by: 'ops@h',
        fenceBefore: 17,
      }).text,
    ).toBe('"chat release chat:1 --if-fence 17" by ops@h: outcome unknown (no answer in time; pinned to fence 17)')
    expect(
      eventRow('1-0', {
        type: 'intervention',
        command: 'chat release chat:1 --if-fence 17',
        result: 'released',
        changed: true,
        by: 'ops@h',
        fenceBefore: 17,
        fenceAfter: 18,
        wakeRefused: "ERR The user executing the script can't publish to the channel",
      }).text,
    ).toBe(
      '"chat release chat:1 --if-fence 17" by ops@h: released, fence 17 → 18, wake-up refused by Redis (ACL): replicas learn it at their next renewal or poll',
    )
    expect(eventRow('1-0', { type: 'something-new', key: 'k', by: 'x' }).text).toBe('something-new key=k by=x')
    const m = advance(
      null,
      dashboard({
        events: [
          { id: '1-0', event: { type: 'replica-start', replicaId: 'a' } },
          { id: '2-0', event: { type: 'replica-stop', replicaId: 'a' } },
        ],
      }),
      {
        sampledAtMs: 0,
        commandsTotal: 0,
      },
    )
    expect(m.events.map((e) => e.id)).toEqual(['2-0', '1-0'])
  })
})

describe('dashboard layout', () => {
  it('gives every panel its base first (by priority), then grows them to what they need', () => {
    const needs = [
      { id: 'replicas' as const, need: 4, base: 4 },
      { id: 'chats' as const, need: 30, base: 6 },
      { id: 'events' as const, need: 13, base: 3 },
    ]
    expect(allocate(needs, ['chats', 'replicas', 'events'], 20)).toMatchObject({ chats: 13, replicas: 4, events: 3 })
    expect(allocate(needs, ['events', 'chats', 'replicas'], 20)).toMatchObject({ events: 10, chats: 6, replicas: 4 })
    expect(allocate(needs, ['chats', 'replicas', 'events'], 8)).toMatchObject({ chats: 6, replicas: 2, events: 0 })
  })

  it('drops the lowest-priority columns first and lets the name column take what is left', () => {
    const cols = [
      { key: 'k', header: 'K', width: 10, priority: 100, flex: true },
      { key: 'a', header: 'A', width: 10, priority: 50 },
      { key: 'b', header: 'B', width: 10, priority: 10 },
    ]
    expect(fitColumns(cols, 40).map((c) => [c.key, c.width])).toEqual([
      ['k', 18],
      ['a', 10],
      ['b', 10],
    ])
    expect(fitColumns(cols, 25).map((c) => [c.key, c.width])).toEqual([
      ['k', 14],
      ['a', 10],
    ])
    expect(fitColumns([{ ...cols[0]!, content: 12 }, cols[1]!], 40).map((c) => c.width)).toEqual([12, 10])
  })

  it('scrolls so the selected row stays visible', () => {
    expect(windowStart(10, 4, 0)).toBe(0)
    expect(windowStart(10, 4, 6)).toBe(3)
    expect(windowStart(3, 4, 2)).toBe(0)
  })
})
