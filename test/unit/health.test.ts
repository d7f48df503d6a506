import { describe, expect, it } from 'vitest'
import {
  LATE_MARGIN,
  chatHealth,
  isLate,
  leadHealth,
  transportDownText,
  fmtMs,
  leaseHealth,
  liveness,
  lockHealth,
  nextGrant,
  replicaHealth,
  stuckReasons,
  ticketState,
} from '../../src/state/health.js'
import { chatVerdict } from '../../src/state/health/chat.js'
import { formatDuration } from '../../src/duration.js'
import { NOW, chatState, holder, incarnationOf, lead, replica, ticket } from '../helpers/snapshots.js'

// Every replica here has a 15 s lease: it renews every 5 s, and a renewal is late past 7.5 s.
const A = replica('pod-a')
const B = replica('pod-b')
const live = liveness([A, B], NOW)

describe('the renewal margin', () => {
  it('is half an interval: late strictly past 1.5 intervals', () => {
    expect(LATE_MARGIN).toBe(0.5)
    expect(isLate(7500, 5000)).toBe(false)
    expect(isLate(7501, 5000)).toBe(true)
  })
})

describe('replicas', () => {
  it('ok, late, gone, evicted — with the measured age, interval and overdue', () => {
    expect(replicaHealth(A, NOW)).toMatchObject({ state: 'ok', heartbeatAgeMs: 1000, renewMs: 5000, renewalOverdueMs: 0 })
    const frozen = replica('pod-f', { beatAgo: 8000 })
    expect(replicaHealth(frozen, NOW)).toMatchObject({ state: 'late', heartbeatAgeMs: 8000, renewalOverdueMs: 3000, expiresInMs: 7000 })
    expect(replicaHealth(frozen, NOW).reason).toBe(
      'pod-f has not beaten for 8s (every 5s): frozen or partitioned; its heartbeat ends in 7s',
    )
    expect(replicaHealth(replica('pod-g', { beatAgo: 16_000 }), NOW).state).toBe('gone')
    expect(replicaHealth(replica('pod-e', { evictedIncarnation: incarnationOf('pod-e') }), NOW).state).toBe('evicted')
  })

  it('takes the interval the heartbeat records (renewMs), else a third of its lease', () => {
    const fast = replica('pod-r', {
      beatAgo: 3000,
      info: { host: 'h', pid: 1, version: '0', startedAt: 0, leaseMs: 15_000, renewMs: 1000 },
    })
    expect(replicaHealth(fast, NOW)).toMatchObject({ state: 'late', renewMs: 1000, renewalOverdueMs: 2000 })
  })
})

describe('liveness', () => {
  it('alive, dead (no heartbeat or evicted), stale (another incarnation beats)', () => {
    expect(live.status(A)).toBe('alive')
    expect(live.status({ replicaId: 'pod-x', incarnation: 'i' })).toBe('dead')
    expect(live.status({ replicaId: 'pod-a', incarnation: 'older' })).toBe('stale')
    const ev = replica('pod-v', { evictedIncarnation: 'gone' })
    expect(liveness([ev], NOW).status({ replicaId: 'pod-v', incarnation: 'gone' })).toBe('dead')
  })
})

describe('leases', () => {
  const lease = (o: { replicaId?: string; incarnation?: string; renewedAgo?: number; expiresIn?: number }) => ({
    replicaId: o.replicaId ?? 'pod-a',
    incarnation: o.incarnation ?? incarnationOf(o.replicaId ?? 'pod-a'),
    lastRenewalMs: NOW - (o.renewedAgo ?? 1000),
    expiresAtMs: NOW + (o.expiresIn ?? 14_000),
  })

  it('ok while renewed on time', () => {
    expect(leaseHealth(lease({}), live, NOW)).toMatchObject({ state: 'ok', renewMs: 5000, renewalOverdueMs: 0, holderAlive: true })
  })

  it('late once the renewal is overdue past the margin, long before the lease ends', () => {
    const h = leaseHealth(lease({ renewedAgo: 6100 + 5000 - 3000, expiresIn: 6900 }), live, NOW)
    expect(h).toMatchObject({ state: 'late', lastRenewalAgoMs: 8100, renewalOverdueMs: 3100, expiresInMs: 6900 })
    expect(h.reason).toBe('holder pod-a has not renewed for 8.1s (every 5s): frozen or partitioned; its lease ends in 6.9s')
    expect(leaseHealth(lease({ renewedAgo: 7000 }), live, NOW).state).toBe('ok') // inside the margin
  })

  it('expired, dead, stale', () => {
    expect(leaseHealth(lease({ expiresIn: -10 }), live, NOW).state).toBe('expired')
    expect(leaseHealth(lease({ replicaId: 'pod-x' }), live, NOW)).toMatchObject({ state: 'dead', holderAlive: false, renewMs: 5000 })
    expect(leaseHealth(lease({ incarnation: 'older' }), live, NOW).state).toBe('stale')
  })

  it('without the holder`s heartbeat, the interval comes from the lease itself (a third of expiry − last renewal)', () => {
    const h = leaseHealth({ ...lease({ replicaId: 'pod-x', renewedAgo: 2000 }), expiresAtMs: NOW + 4000 }, live, NOW)
    expect(h.renewMs).toBe(2000)
  })

  it('a lock: ok or expired; its holder unknown unless a live replica runs as its owner', () => {
    expect(lockHealth({ owner: 'h-pod-b:10', expiresAtMs: NOW + 5 }, live, NOW)).toMatchObject({ state: 'ok', holderAlive: true })
    expect(lockHealth({ owner: 'elsewhere:1', expiresAtMs: NOW - 5 }, live, NOW)).toMatchObject({ state: 'expired', holderAlive: null })
  })
})

describe('tickets and the next grant', () => {
  it('alive, dead, stale, expired', () => {
    expect(ticketState(ticket(1, 'pod-a'), live, NOW)).toBe('alive')
    expect(ticketState(ticket(1, 'pod-x'), live, NOW)).toBe('dead')
    expect(ticketState(ticket(1, 'pod-a', { incarnation: 'older' }), live, NOW)).toBe('stale')
    expect(ticketState(ticket(1, 'pod-a', { deadlineInMs: -1 }), live, NOW)).toBe('expired')
  })

  it('follows the grant rule: nobody while the holder`s lease runs; skips passed deadlines and an expired holder`s own tickets', () => {
    const held = chatState('c', { holder: holder('pod-a'), tickets: [ticket(2, 'pod-b')] })
    expect(nextGrant(held, NOW)).toBeNull()
    expect(nextGrant(held, NOW, { revokeHolder: true })?.ticket).toBe(2)
    const expired = chatState('c', {
      holder: holder('pod-a', { expiresInMs: -1 }),
      tickets: [ticket(2, 'pod-b', { deadlineInMs: -1 }), ticket(3, 'pod-a'), ticket(4, 'pod-b')],
    })
    expect(nextGrant(expired, NOW)?.ticket).toBe(4)
    // an operator's revocation does not presume the holder dead: its own later ticket is granted
    expect(nextGrant(expired, NOW, { revokeHolder: true })?.ticket).toBe(3)
    expect(nextGrant(expired, NOW, { revokeHolder: true, except: 3 })?.ticket).toBe(4)
  })
})

describe('chats', () => {
  const codes = (c: ReturnType<typeof chatHealth>) => c.findings.map((f) => f.code)

  it('idle and ok', () => {
    expect(chatHealth(chatState('c'), live, NOW).state).toBe('idle')
    const ok = chatHealth(chatState('c', { holder: holder('pod-a'), tickets: [ticket(2, 'pod-b')] }), live, NOW)
    expect(ok).toMatchObject({ state: 'ok', queueLength: 1, oldestWaitMs: 2000, heldForMs: 5000, findings: [] })
    expect(stuckReasons(ok)).toEqual([])
  })

  it('late: a holder late to renew with nobody waiting; stuck once messages wait behind it', () => {
    const h = holder('pod-a', { lastRenewalMs: NOW - 8100, expiresInMs: 6900 })
    const late = chatHealth(chatState('c', { holder: h }), live, NOW)
    expect(late.state).toBe('late')
    expect(codes(late)).toEqual(['holder-late'])
    const stuck = chatHealth(chatState('c', { holder: h, tickets: [ticket(2, 'pod-b'), ticket(3, 'pod-b')] }), live, NOW)
    expect(stuck.state).toBe('stuck')
    expect(stuck.reason).toBe('holder pod-a has not renewed for 8.1s (every 5s): frozen or partitioned; its lease ends in 6.9s; 2 waiting')
  })

  it('stuck: a dead or restarted holder, a dead head ticket, a queue nobody is granted', () => {
    const dead = chatHealth(chatState('c', { holder: holder('pod-x'), tickets: [ticket(2, 'pod-b')] }), live, NOW)
    expect([dead.state, codes(dead)]).toEqual(['stuck', ['holder-dead']])
    const stale = chatHealth(chatState('c', { holder: holder('pod-a', { incarnation: 'older' }) }), live, NOW)
    expect(codes(stale)).toEqual(['holder-stale-incarnation'])
    const head = chatHealth(chatState('c', { tickets: [ticket(2, 'pod-x'), ticket(3, 'pod-b', { incarnation: 'old' })] }), live, NOW)
    expect([head.state, codes(head)]).toEqual(['stuck', ['head-ticket-dead', 'stale-tickets']])
    expect(head.tickets).toEqual(['dead', 'stale'])
    const ungranted = chatHealth(chatState('c', { tickets: [ticket(2, 'pod-b', { waitedMs: 6000 })] }), live, NOW)
    expect([ungranted.state, codes(ungranted)]).toEqual(['stuck', ['queue-without-holder']])
  })

  it('expired: a holder past its lease does not hold the turn, with waiters or without', () => {
    const exp = chatHealth(chatState('c', { holder: holder('pod-a', { expiresInMs: -100 }), tickets: [ticket(2, 'pod-b')] }), live, NOW)
    expect([exp.state, codes(exp)]).toEqual(['expired', ['holder-expired']])
    expect(exp.reason).toMatch(
      /^the turn is not held: pod-a's lease expired 100ms ago .*; ticket 2 \(pod-b\) is granted at that replica's next poll$/,
    )
    const alone = chatHealth(chatState('c', { holder: holder('pod-a', { expiresInMs: -1300 }) }), live, NOW)
    expect([alone.state, codes(alone)]).toEqual(['expired', ['holder-expired']])
    expect(alone.reason).toMatch(/nothing waits: the chat is free, its next message gets the turn at once$/)
  })

  it('attention: a head ticket about to be skipped, a slow holder', () => {
    const skip = chatHealth(chatState('c', { holder: holder('pod-a'), tickets: [ticket(2, 'pod-b', { deadlineInMs: -1 })] }), live, NOW)
    expect([skip.state, codes(skip)]).toEqual(['attention', ['head-ticket-expired']])
    const slow = chatHealth(chatState('c', { holder: holder('pod-a', { heldForMs: 61_000 }), tickets: [ticket(2, 'pod-b')] }), live, NOW)
    expect([slow.state, codes(slow)]).toEqual(['attention', ['holder-slow']])
    expect(
      chatHealth(chatState('c', { holder: holder('pod-a', { heldForMs: 61_000 }), tickets: [ticket(2, 'pod-b')] }), live, NOW, {
        turnWaitMs: 600_000,
      }).state,
    ).toBe('ok')
  })
})

describe('leads', () => {
  it('ok, late, dead, stale, expired, vacant', () => {
    expect(leadHealth(lead('provider:wa', 'pod-a'), live, NOW).state).toBe('ok')
    const frozen = lead('provider:wa', {
      replicaId: 'pod-a',
      incarnation: incarnationOf('pod-a'),
      expiresAtMs: NOW + 11_500,
      sinceMs: NOW - 60_000,
      lastRenewalMs: NOW - 8500,
    })
    const late = leadHealth(frozen, live, NOW)
    expect(late).toMatchObject({ state: 'late', leadingForMs: 60_000 })
    expect(late.reason).toBe('leader pod-a has not renewed for 8.5s (every 5s): frozen or partitioned; its lease ends in 11.5s')
    expect(leadHealth(lead('provider:wa', 'pod-x'), live, NOW).state).toBe('dead')
    expect(leadHealth(lead('provider:wa', { ...frozen.holder!, incarnation: 'old', lastRenewalMs: NOW }), live, NOW).state).toBe('stale')
    expect(leadHealth(lead('provider:wa', { ...frozen.holder!, expiresAtMs: NOW - 1 }), live, NOW).state).toBe('expired')
    const vacant = leadHealth(
      lead('provider:wa', null, {
        releasedAtMs: NOW - 3000,
        candidates: [{ replicaId: 'pod-b', incarnation: incarnationOf('pod-b'), deadlineMs: NOW + 1 }],
      }),
      live,
      NOW,
    )
    expect(vacant).toMatchObject({
      state: 'vacant',
      vacantForMs: 3000,
      reason: 'nobody leads provider:wa (for 3s); 1 replica(s) stand for it',
    })
  })

  it('down: a renewing leader whose transport it recorded closed — for how long, and when it yields', () => {
    const l = lead('provider:wa', 'pod-a', { transportDown: { sinceMs: NOW - 35_000, yieldsAtMs: NOW + 25_000 } })
    const h = leadHealth(l, live, NOW)
    expect(h.state).toBe('down')
    expect(h.transportDown).toEqual({ downForMs: 35_000, yieldAfterMs: 60_000, yieldsInMs: 25_000 })
    expect(transportDownText(h.transportDown!)).toBe('transport down 35s (yields at 1m)')
    expect(h.reason).toMatch(/^pod-a leads provider:wa but its transport down 35s \(yields at 1m\).*yields in 25s/)
    // a lease problem outranks it: a frozen leader is late, its transport record says nothing newer
    const frozen = lead('provider:wa', { ...l.holder!, lastRenewalMs: NOW - 8500 }, { transportDown: l.transportDown })
    expect(leadHealth(frozen, live, NOW)).toMatchObject({ state: 'late', transportDown: { downForMs: 35_000 } })
    expect(leadHealth(lead('provider:wa', 'pod-a'), live, NOW).transportDown).toBeNull()
  })

  it('one formatting: the interval in a reason reads as formatDuration prints it beside it', () => {
    // 5000 / 3 = 1666ms: once read 1.7s in the reason and 1.6s in the RENEWED column
    expect(fmtMs(1666)).toBe(formatDuration(1666))
    expect(fmtMs(-1666)).toBe('1.6s')
  })
})

describe('the chat verdict (chat ls and chat inspect --explain both apply it)', () => {
  const problem = { severity: 'problem' as const, message: 'p' }
  const warning = { severity: 'warning' as const, message: 'w' }
  const info = { severity: 'info' as const, message: 'i' }

  it('a problem makes it stuck and is the finding that decided; a late or expired holder outranks a warning', () => {
    expect(chatVerdict([warning, problem], { holder: 'late', queueLength: 1 })).toEqual({ state: 'stuck', finding: problem })
    expect(chatVerdict([warning], { holder: 'late', queueLength: 0 })).toEqual({ state: 'late', finding: warning })
    expect(chatVerdict([warning], { holder: 'expired', queueLength: 0 }).state).toBe('expired')
    expect(chatVerdict([info, warning], { holder: 'ok', queueLength: 0 })).toEqual({ state: 'attention', finding: warning })
  })

  it('idle only when nobody holds the turn and nothing waits; info alone decides nothing', () => {
    expect(chatVerdict([info], { holder: null, queueLength: 0 })).toEqual({ state: 'idle', finding: null })
    expect(chatVerdict([info], { holder: null, queueLength: 2 }).state).toBe('ok')
    expect(chatVerdict([], { holder: 'ok', queueLength: 0 }).state).toBe('ok')
  })
})
