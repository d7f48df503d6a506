// The invariants, checked on one run's merged history. Each checker returns violations (an
// invariant name and a minimal window of history around it) and counters for the table.
import { checkRegister, WILD } from './linearizability.mjs'

export const INVARIANTS = [
  'sink-stale-accepted', // the fenced sink accepted an effect from a turn older than one it had seen
  'turn-overlap', // two turns of one chat, both past assertHeld(), overlapping in time (unexplained)
  'fail-closed', // an explained overlap (data loss, operator revocation) lasted past the bound
  'fifo', // messages of one replica and chat granted out of arrival order
  'fifo-across-outage', // the same, for messages that waited through a Redis outage or a failover (test/integration/chaos-ticket-retry.test.ts, test/ha/lossy-failover.test.ts)
  'fence-order', // a key's fence did not strictly increase from one grant to the next
  'checkpoint-lost', // an acknowledged checkpoint write lost or overwritten by an older owner
  'superseded-shape', // a refused fenced write not rejected as LeaseLostError 'superseded'
  'linearizability', // a checkpoint key's history is not a compare-and-set register
  'liveness', // a healthy replica's message not handled within turnWaitMs
  'handoff-time', // a dead holder's chat or a dead leader's lead not taken within leaseMs + poll
  'queued-stall', // a replica killed with a message queued held that chat's other waiters past leaseMs + poll of the kill (and their turn ahead)
  'leader-overlap', // two leaders valid by their own local deadlines at once (unexplained)
  'leader-gap', // nobody led for longer than leaseMs + poll while no fault was active
  'spurious-loss', // a lease lost by a pause of 0.5 × leaseMs, or by a wall-clock jump
  'withdraw-time', // a ticket given up while its link was cut still queued or held past leaseMs / 3 + poll after Redis answered again
  'live-dropped', // a live replica's message dropped (its own ticket behind a grant it had given up)
  'keys-left', // keys left behind that should not be
  'warning-missing', // an evicting maxmemory-policy without a warning at start
  'failover-stall', // after a failover (Sentinel, Cluster), a chat with a waiting message did not move on within leaseMs + poll of the promotion
  'failover-dropped', // a live replica's message dropped ('dropped': an operator's reason) around a failover, with no operator at work
  'tenant-neighbour', // a key of another bot under a nested prefix (<prefix>:eu) changed, in a run that lost no data
]

const provider = () => 'the provider'
const fmt = (t, t0) => `+${(t - t0).toFixed(1)}ms`

/** Did a fault of one of `kinds` touch [a, b] (its window extended by `tail` ms)? */
function faultsIn(faults, a, b, pred, tail) {
  return faults.filter((f) => pred(f) && f.start <= b && (f.end ?? f.start) + tail >= a)
}

export function checkRun({ events, sink, faults, cfg, keysLeft, neighbourChanged, t0 }) {
  const L = cfg.leaseMs
  const violations = []
  const stats = {
    messages: 0,
    handled: 0,
    lostWithKilled: 0,
    failedExcused: 0,
    droppedByOperator: 0,
    handoffs: [],
    queuedMoveOns: [],
    leaderFailovers: [],
    pauseLosses: {},
    explainedOverlaps: 0,
    marginLosses: 0,
    redisExpiredLosses: 0,
    blockLosses: 0,
    pauseLossCheck: 0,
    linChecked: 0,
    linUnchecked: 0,
    staleRejected: 0,
    fifoExcluded: 0,
    withdrawRepairMs: [],
    failoverMoveOns: [],
    /** Explained overlaps: the fault behind each and how long both held (the old holder's last assertHeld − the new grant). */
    overlapWindows: [],
  }
  const explained = (x, a, b) => {
    stats.explainedOverlaps++
    stats.overlapWindows.push({ why: x.why, ms: Math.round(a.lastAssert - b.grantAt) })
  }
  const violate = (inv, message, window) => violations.push({ invariant: inv, message, window: window ?? [] })
  const ev = [...events].sort((a, b) => a.t - b.t)
  const show = (list) => list.slice(0, 14).map((e) => ({ ...e, t: fmt(e.t, t0) }))
  const near = (t, pred = () => true, span = L) => show(ev.filter((e) => Math.abs(e.t - t) <= span && pred(e)))

  const dataLoss = faults.filter((f) => f.dataLoss)
  const revocations = faults.filter((f) => f.revokes)
  const globalFault = (f) => f.scope === 'global'

  // ---------------------------------------------------------------- turns
  const turns = new Map() // inc|chat|fence
  const turnOf = (inc, chat, fence) => {
    const k = `${inc}|${chat}|${fence}`
    let t = turns.get(k)
    if (!t)
      turns.set(k, (t = { inc, w: null, chat, fence, grantAt: Infinity, lastAssert: -Infinity, asserts: 0, endAt: -Infinity, lost: null }))
    return t
  }
  const lastSeenOfInc = new Map()
  for (const e of ev) {
    lastSeenOfInc.set(e.inc, e.t)
    if (e.type === 'grant') {
      const t = turnOf(e.inc, e.chat, e.fence)
      // one grant is one message's: the same grant taken for two messages of a replica holds the chat twice
      if (t.grantAt < Infinity && t.msg !== e.msg)
        violate(
          'turn-overlap',
          `${e.chat}: fence ${e.fence} (${e.inc}) granted to message ${t.msg} at ${fmt(t.grantAt, t0)} and again to message ${e.msg} at ${fmt(e.t, t0)}`,
          near(e.t, (x) => x.chat === e.chat),
        )
      Object.assign(t, { w: e.w, grantAt: e.t, msg: e.msg })
    } else if (e.type === 'assert') {
      const t = turnOf(e.inc, e.chat, e.fence)
      t.asserts++
      t.lastAssert = e.t
    } else if (e.type === 'release') turnOf(e.inc, e.chat, e.fence).endAt = e.t
    else if (e.type === 'lost' && e.kind === 'chat') {
      const t = turnOf(e.inc, e.key, e.fence)
      t.lost = e.reason
      t.endAt = Math.max(t.endAt, e.t)
    }
  }
  for (const t of turns.values()) if (t.endAt === -Infinity) t.endAt = lastSeenOfInc.get(t.inc) ?? t.lastAssert
  const byChat = groupBy(
    [...turns.values()].filter((t) => t.grantAt < Infinity),
    (t) => t.chat,
  )

  /** Is an overlap of `a` (older) and `b` explained by data loss or an operator, and did `a` fail closed in time? */
  const explain = (a, b, kindMatch) => {
    for (const f of dataLoss) {
      if (a.grantAt <= (f.restoredAt ?? f.end) && b.grantAt >= f.lossAt && a.lastAssert >= f.lossAt) {
        const bound = (f.restoredAt ?? f.end) + L / 3 + L / 4
        return a.lastAssert <= bound ? { ok: true, why: f.kind } : { ok: false, why: f.kind, bound }
      }
    }
    for (const f of revocations) {
      if (!kindMatch(f, a)) continue
      if (f.start <= b.grantAt + 5 && (f.end ?? f.start) >= a.grantAt - 5) {
        const bound = (f.end ?? f.start) + L / 3 + L / 4
        return a.lastAssert <= bound ? { ok: true, why: f.kind } : { ok: false, why: f.kind, bound }
      }
    }
    return null
  }
  const chatRevokes = (f, a) => (f.revokes.chat && f.revokes.chat === a.chat) || (f.revokes.inc && f.revokes.inc === a.inc)

  for (const [chat, list] of byChat) {
    const held = list.filter((t) => t.asserts > 0).sort((a, b) => a.grantAt - b.grantAt)
    for (let i = 0; i < held.length; i++) {
      for (let j = i + 1; j < held.length; j++) {
        const a = held[i]
        const b = held[j]
        if (b.grantAt >= a.lastAssert) continue
        const x = explain(a, b, chatRevokes)
        if (x?.ok) explained(x, a, b)
        else if (x)
          violate(
            'fail-closed',
            `${chat}: holder fence ${a.fence} (${a.inc}) still passed assertHeld ${(a.lastAssert - x.bound).toFixed(0)}ms after the bound of ${x.why}`,
            near(b.grantAt, (e) => e.chat === chat || e.key === chat),
          )
        else
          violate(
            'turn-overlap',
            `${chat}: fence ${a.fence} (${a.inc}) passed assertHeld at ${fmt(a.lastAssert, t0)} after fence ${b.fence} (${b.inc}) was granted at ${fmt(b.grantAt, t0)}`,
            near(b.grantAt, (e) => e.chat === chat || e.key === chat),
          )
      }
    }
    // fences: no two grants share one; a grant after another ended carries a higher fence
    const seenFence = new Map()
    for (const t of list) {
      const o = seenFence.get(t.fence)
      if (o && o.inc !== t.inc)
        violate(
          'fence-order',
          `${chat}: fence ${t.fence} granted to ${o.inc} and ${t.inc}`,
          near(t.grantAt, (e) => e.chat === chat),
        )
      seenFence.set(t.fence, t)
    }
    const sorted = [...list].sort((a, b) => a.grantAt - b.grantAt)
    for (let j = 0; j < sorted.length; j++) {
      for (let i = 0; i < j; i++) {
        const a = sorted[i]
        const b = sorted[j]
        if (a.endAt < b.grantAt && a.fence >= b.fence) {
          violate(
            'fence-order',
            `${chat}: fence ${b.fence} granted at ${fmt(b.grantAt, t0)} is not above fence ${a.fence} of a turn that ended at ${fmt(a.endAt, t0)}`,
            near(b.grantAt, (e) => e.chat === chat),
          )
        }
      }
    }
  }

  // ---------------------------------------------------------------- leads
  const leads = new Map()
  for (const e of ev) {
    if (e.type === 'leader')
      leads.set(`${e.inc}|${e.fence}`, {
        inc: e.inc,
        w: e.w,
        fence: e.fence,
        grantAt: e.t,
        lastAssert: -Infinity,
        asserts: 0,
        endAt: -Infinity,
      })
    else if (e.type === 'lead-assert') {
      const l = leads.get(`${e.inc}|${e.fence}`)
      if (l) {
        l.asserts++
        l.lastAssert = e.t
      }
    } else if (e.type === 'lost' && e.kind === 'lead') {
      const l = leads.get(`${e.inc}|${e.fence}`)
      if (l) l.endAt = e.t
    } else if (e.type === 'follower') {
      for (const l of leads.values()) if (l.inc === e.inc && l.endAt === -Infinity) l.endAt = e.t
    }
  }
  const leadList = [...leads.values()].sort((a, b) => a.grantAt - b.grantAt)
  for (const l of leadList) if (l.endAt === -Infinity) l.endAt = lastSeenOfInc.get(l.inc) ?? l.lastAssert
  const leadRevokes = (f, a) => f.revokes.lead || (f.revokes.inc && f.revokes.inc === a.inc)
  for (let i = 0; i < leadList.length; i++) {
    for (let j = i + 1; j < leadList.length; j++) {
      const a = leadList[i]
      const b = leadList[j]
      if (a.asserts === 0 || b.grantAt >= a.lastAssert) continue
      const x = explain(a, b, leadRevokes)
      if (x?.ok) explained(x, a, b)
      else if (x)
        violate(
          'fail-closed',
          `lead: fence ${a.fence} (${a.inc}) still valid past the bound of ${x.why}`,
          near(b.grantAt, (e) => e.name),
        )
      else
        violate(
          'leader-overlap',
          `lead: fence ${a.fence} (${a.inc}) passed assertHeld at ${fmt(a.lastAssert, t0)} after fence ${b.fence} (${b.inc}) led from ${fmt(b.grantAt, t0)}`,
          near(b.grantAt, (e) => e.name),
        )
    }
    if (i > 0 && leadList[i].fence <= leadList[i - 1].fence && leadList[i - 1].endAt < leadList[i].grantAt) {
      violate(
        'fence-order',
        `lead: fence ${leadList[i].fence} not above ${leadList[i - 1].fence}`,
        near(leadList[i].grantAt, (e) => e.name),
      )
    }
  }

  // nobody leading, with no fault around: a standby must lead within leaseMs + one poll
  const stopping = Math.min(...ev.filter((e) => e.type === 'stopping').map((e) => e.t), Infinity)
  let ledUntil = leadList.length ? leadList[0].grantAt : Infinity
  for (const l of leadList) {
    if (l.grantAt > ledUntil && l.grantAt < stopping) {
      const gap = l.grantAt - ledUntil
      const around = faultsIn(faults, ledUntil - L, l.grantAt, (f) => f.scope !== 'none' || f.kind.startsWith('op-'), 2 * L)
      if (!around.length && gap > L + cfg.maxPollMs + cfg.handoffSlackMs) {
        violate(
          'leader-gap',
          `nobody led ${provider(l)} from ${fmt(ledUntil, t0)} to ${fmt(l.grantAt, t0)} (${gap.toFixed(0)} ms) with no fault active`,
          near(ledUntil, (e) => e.name || e.type === 'lost', gap + 100),
        )
      }
    }
    ledUntil = Math.max(ledUntil, l.endAt)
  }

  // ---------------------------------------------------------------- sink
  const maxSeen = new Map()
  for (const s of sink) {
    const k = `${s.kind}|${s.key}`
    const m = maxSeen.get(k) ?? -Infinity
    if (s.accepted && s.fence < m) violate('sink-stale-accepted', `${s.key}: effect of fence ${s.fence} accepted after fence ${m}`, [s])
    if (!s.accepted) stats.staleRejected++
    if (s.accepted) maxSeen.set(k, Math.max(m, s.fence))
  }

  // ---------------------------------------------------------------- messages: FIFO and liveness
  const msgs = new Map()
  for (const e of ev) {
    if (e.msg === undefined || e.msg === null) continue
    let m = msgs.get(e.msg)
    if (!m) msgs.set(e.msg, (m = { id: e.msg, chat: e.chat, inc: e.inc, w: e.w }))
    if (e.type === 'recv') m.recv = e.t
    else if (e.type === 'grant') Object.assign(m, { grant: e.t, fence: e.fence })
    else if (e.type === 'done') m.done = e.t
    else if (e.type === 'fail') Object.assign(m, { fail: e.t, failStage: e.stage, failReason: e.reason, failCode: e.code })
  }
  const sent = cfg.sentMessages ?? msgs.size
  stats.messages = sent
  // A fault of the message's own replica (its process, its link), and with the global ones.
  const ownFault = (m, f) => f.target === m.w || f.inc === m.inc || f.affects?.includes(m.w)
  const replicaFaults = (m, a, b) => faultsIn(faults, a, b, (f) => globalFault(f) || ownFault(m, f), 2 * L + 500)
  const byIncChat = groupBy(
    [...msgs.values()].filter((m) => m.recv !== undefined),
    (m) => `${m.inc}|${m.chat}`,
  )
  for (const [, list] of byIncChat) {
    const granted = list.filter((m) => m.grant !== undefined).sort((a, b) => a.recv - b.recv)
    for (let i = 1; i < granted.length; i++) {
      const prev = granted[i - 1]
      const m = granted[i]
      if (m.grant < prev.grant) {
        const outage = faultsIn(
          faults,
          prev.recv,
          prev.grant,
          (f) => f.scope === 'global' || (f.kind.startsWith('net-') && f.target === m.w),
          0,
        )
        violate(
          outage.length ? 'fifo-across-outage' : 'fifo',
          `${m.chat} on ${m.inc}: message ${m.id} (received ${fmt(m.recv, t0)}) granted before message ${prev.id} (received ${fmt(prev.recv, t0)})`,
          show(ev.filter((e) => e.inc === m.inc && e.chat === m.chat && e.t >= prev.recv - 5 && e.t <= m.grant + 5)),
        )
      }
    }
  }
  // ---------------------------------------------------------------- waits given up while cut off
  const slackMs = cfg.handoffSlackMs ?? 400
  for (const f of faults.filter((f) => f.kind === 'net-cut-waiting')) {
    const answered = ev.find((e) => e.type === 'link-ready' && e.inc === f.inc && e.t >= f.restoredAt)?.t ?? f.restoredAt
    const bound = L / 3 + cfg.maxPollMs + slackMs
    const window = () => show(ev.filter((e) => e.inc === f.inc && (e.chat === f.chat || e.type === 'link-ready') && e.t >= f.start - 50))
    if (f.clearedAt === null || f.clearedAt === undefined) {
      violate(
        'withdraw-time',
        `${f.chat}: tickets ${f.tickets.join(', ')} of ${f.inc} (given up while cut off) still in Redis 4 leases after its link was restored`,
        window(),
      )
    } else {
      const ms = Math.max(0, f.clearedAt - answered)
      stats.withdrawRepairMs.push(Math.round(ms))
      if (ms > bound)
        violate(
          'withdraw-time',
          `${f.chat}: tickets ${f.tickets.join(', ')} of ${f.inc} (given up while cut off) left in Redis ${Math.round(ms)}ms after Redis answered again (bound ${Math.round(bound)}ms)`,
          window(),
        )
    }
    const operator = (g) =>
      g !== f && (g.kind.startsWith('op-') || globalFault(g) || g.kind.startsWith('kill') || g.kind === 'restart-same-id')
    for (const m of msgs.values()) {
      if (m.inc !== f.inc || m.chat !== f.chat || m.failReason !== 'dropped' || m.recv < f.start) continue
      if (faultsIn(faults, m.recv - L, m.fail, operator, L).length) continue
      violate('live-dropped', `message ${m.id} of live ${m.inc} on ${m.chat} dropped after its waits were given up while cut off`, window())
    }
  }

  // ---------------------------------------------------------------- after a failover
  // Every chat with a message waiting at the promotion moves on (its next grant) within leaseMs + a
  // poll of it: a lease the new master does not know is not waited out, a release it lost is sent
  // again, a ticket it lost is queued again. And no message of a live replica fails as 'dropped'
  // (an operator's reason) because of a failover.
  const failoverSlack = cfg.handoffSlackMs ?? 400
  const operatorAt = (a, b) => faultsIn(faults, a, b, (g) => g.kind.startsWith('op-'), L).length > 0
  // A replica frozen, cut off or restarted by a fault of its own is presumed dead once its lease runs
  // out, and its queued tickets are passed over ('dropped') with or without a failover: the liveness
  // check below excuses it by the same faults; only the replica's own faults count here, not the
  // failover itself.
  const ownFaultAt = (m, a, b) => faultsIn(faults, a, b, (g) => !globalFault(g) && ownFault(m, g), 2 * L + 500).length > 0
  for (const f of faults.filter((x) => x.failover && x.restoredAt)) {
    const bound = f.restoredAt + L + cfg.maxPollMs + failoverSlack
    for (const [chat, list] of byChat) {
      const waiting = [...msgs.values()].filter(
        (m) => m.chat === chat && m.recv <= f.restoredAt && (m.grant === undefined || m.grant > f.restoredAt) && m.fail === undefined,
      )
      if (!waiting.length) continue
      const next = list.filter((t) => t.grantAt > f.restoredAt).sort((a, b) => a.grantAt - b.grantAt)[0]
      // A replica killed or frozen meanwhile explains a longer wait (its lease runs out first).
      const excused = faultsIn(
        faults,
        f.start,
        bound,
        (g) =>
          g !== f && (g.kind.startsWith('kill') || g.kind.startsWith('pause') || g.kind === 'restart-same-id' || g.kind.startsWith('op-')),
        L,
      )
      if (next)
        stats.failoverMoveOns.push({
          kind: f.kind,
          promotionMs: Math.round(f.restoredAt - f.start),
          moveOnMs: Math.round(next.grantAt - f.restoredAt),
        })
      if ((next && next.grantAt <= bound) || excused.length) continue
      violate(
        'failover-stall',
        `${chat}: ${waiting.length} message(s) waiting at the promotion (${f.kind}, done ${fmt(f.restoredAt, t0)}); ${next ? `next grant at ${fmt(next.grantAt, t0)}` : 'no grant after it'}, bound ${fmt(bound, t0)}`,
        show(ev.filter((e) => (e.chat === chat || e.key === chat) && e.t >= f.start - 50 && e.t <= bound + L)),
      )
    }
    for (const m of msgs.values()) {
      if (m.failReason !== 'dropped' || m.fail === undefined || m.fail < f.start || m.recv > f.restoredAt + L) continue
      if (operatorAt(m.recv - L, m.fail) || ownFaultAt(m, m.recv - L, m.fail)) continue
      violate(
        'failover-dropped',
        `message ${m.id} of ${m.inc} on ${m.chat} failed as 'dropped' at ${fmt(m.fail, t0)} after ${f.kind} (no operator at work)`,
        show(ev.filter((e) => (e.chat === m.chat || e.key === m.chat) && e.t >= f.start - 50 && e.t <= m.fail + 50)),
      )
    }
  }

  for (const m of msgs.values()) {
    if (m.done !== undefined) {
      stats.handled++
      continue
    }
    if (m.failReason === 'dropped') {
      stats.droppedByOperator++
      continue
    }
    const end = m.fail ?? m.recv + cfg.turnWaitMs
    const excused = replicaFaults(m, (m.recv ?? 0) - L, end)
    if (m.fail === undefined && excused.some((f) => f.kind.startsWith('kill') || f.kind === 'restart-same-id' || f.kind === 'op-evict')) {
      stats.lostWithKilled++
      continue
    }
    if (excused.length) {
      stats.failedExcused++
      continue
    }
    violate(
      'liveness',
      `message ${m.id} on ${m.chat} received by healthy ${m.inc} at ${fmt(m.recv, t0)}: ${m.fail !== undefined ? `failed at ${m.failStage} (${m.failCode} ${m.failReason ?? ''})` : 'never handled'}`,
      show(ev.filter((e) => (e.chat === m.chat || e.key === m.chat) && e.t >= m.recv - 50 && e.t <= end + 50)),
    )
  }
  // never received at all (sent to a replica that died before reading it)
  stats.lostWithKilled += Math.max(0, sent - msgs.size)

  // ---------------------------------------------------------------- handoffs after a holder / leader died
  const slack = cfg.handoffSlackMs
  for (const f of faults.filter((f) => f.killedAt && f.killedInc)) {
    const at = f.killedAt
    for (const [chat, list] of byChat) {
      const heldThen = list.find((t) => t.inc === f.killedInc && t.grantAt <= at && t.endAt >= at - 1)
      if (!heldThen) continue
      const waiter = [...msgs.values()].some((m) => m.chat === chat && m.inc !== f.killedInc && m.recv < at + L - 50 && m.grant > at)
      const next = list.filter((t) => t.grantAt > at && t.inc !== f.killedInc).sort((a, b) => a.grantAt - b.grantAt)[0]
      if (!waiter || !next) continue
      const d = next.grantAt - at
      // another fault in the meantime (a cut-off replica's ticket ahead in the queue lives leaseMs too)
      if (faultsIn(faults, at, next.grantAt, (g) => g !== f && g.scope !== 'none', 0).length) continue
      stats.handoffs.push(d)
      if (d > L + cfg.maxPollMs + slack)
        violate(
          'handoff-time',
          `${chat}: holder ${f.killedInc} killed at ${fmt(at, t0)}, next grant ${d.toFixed(0)}ms later (bound ${L + cfg.maxPollMs} + ${slack} slack)`,
          near(at, (e) => e.chat === chat, d + 100),
        )
    }
    const ledThen = leadList.find((l) => l.inc === f.killedInc && l.grantAt <= at && l.endAt >= at - 1)
    if (ledThen) {
      const next = leadList.find((l) => l.grantAt > at && l.inc !== f.killedInc)
      if (next && !faultsIn(faults, at, next.grantAt, (g) => g !== f && globalFault(g), 0).length) {
        const d = next.grantAt - at
        stats.leaderFailovers.push(d)
        if (d > L + cfg.maxPollMs + slack)
          violate(
            'handoff-time',
            `lead: leader ${f.killedInc} killed at ${fmt(at, t0)}, next leader ${d.toFixed(0)}ms later`,
            near(at, (e) => e.name, d + 100),
          )
      }
    }
  }

  // ---------------------------------------------------------------- a replica killed with messages queued
  // Its tickets stay live until they would next be refreshed, and a grant offered to one of them
  // lapses unused: either way, by leaseMs + a poll after the kill its tickets hold nobody up. A live
  // replica's message waiting in that chat then waits only for the live turns ahead of it.
  for (const f of faults.filter((f) => f.killedAt && f.killedInc)) {
    const at = f.killedAt
    for (const [chat, list] of byChat) {
      const queuedThen = [...msgs.values()].some(
        (m) => m.chat === chat && m.inc === f.killedInc && m.recv !== undefined && m.recv < at && !(m.grant <= at),
      )
      if (!queuedThen) continue
      const turns = list.filter((t) => t.grantAt > at).sort((a, b) => a.grantAt - b.grantAt)
      for (const m of msgs.values()) {
        if (m.chat !== chat || m.inc === f.killedInc || m.recv === undefined || !(m.grant > at) || m.recv >= at + L) continue
        // another fault in the meantime explains a longer wait
        if (faultsIn(faults, at, m.grant, (g) => g !== f && g.scope !== 'none', 0).length) continue
        // The live turns granted ahead of it after the dead tickets stopped counting, and their hand-offs.
        const free = Math.max(m.recv, at + L)
        const ahead = turns.filter((t) => t.grantAt < m.grant && (t.endAt ?? t.grantAt) > free)
        const busy = ahead.reduce((sum, t) => sum + ((t.endAt ?? t.grantAt) - Math.max(t.grantAt, free)) + 5, 0)
        const bound = free + cfg.maxPollMs + slack + busy
        stats.queuedMoveOns.push(Math.round(m.grant - at))
        if (m.grant > bound)
          violate(
            'queued-stall',
            `${chat}: ${f.killedInc} killed at ${fmt(at, t0)} with a message queued; message ${m.id} of ${m.inc} granted at ${fmt(m.grant, t0)}, bound ${fmt(bound, t0)}`,
            near(at, (e) => e.chat === chat, m.grant - at + 100),
          )
      }
    }
  }

  // ---------------------------------------------------------------- pauses, blocks, clock jumps
  for (const f of faults.filter(
    (f) => f.kind === 'pause-0.5' || f.kind === 'pause-0.8' || f.kind === 'block-0.9' || f.kind === 'clock-jump',
  )) {
    const others = faultsIn(
      faults,
      f.start - L,
      (f.end ?? f.start) + L,
      (g) => g !== f && g.scope !== 'none' && (globalFault(g) || g.target === f.target || g.affects?.includes(f.target)),
      0,
    )
    const losses = ev.filter((e) => e.type === 'lost' && e.inc === f.inc && e.t >= f.start && e.t <= (f.end ?? f.start) + L / 2)
    if (f.kind === 'pause-0.5' || f.kind === 'clock-jump') {
      if (others.length) continue
      stats.pauseLossCheck++
      for (const l of losses)
        violate(
          'spurious-loss',
          `${f.kind} on ${f.target}: lost ${l.kind} ${l.key} (${l.reason})`,
          near(l.t, (e) => e.inc === f.inc),
        )
    } else {
      const by = (stats.pauseLosses[f.kind] ??= { faults: 0, margin: 0, expired: 0, kept: 0 })
      by.faults++
      if (!losses.length) by.kept++
      for (const l of losses) {
        const probe = f.probe?.find((p) => p.key === l.key)
        if (probe && probe.redisMsLeft > 0) {
          stats.marginLosses++
          by.margin++
        } else {
          stats.redisExpiredLosses++
          by.expired++
        }
      }
    }
  }

  // ---------------------------------------------------------------- checkpoints
  const opsById = new Map()
  for (const e of ev) {
    if (e.type !== 'cp') continue
    let o = opsById.get(e.id)
    if (!o) opsById.set(e.id, (o = { id: e.id, chat: e.chat, kind: e.op, call: e.t, ret: Infinity, outcome: 'info', inc: e.inc }))
    if (e.phase === 'call') Object.assign(o, { call: e.t, expected: e.expected ?? null, fence: e.fence })
    else if (e.phase === 'ok') Object.assign(o, { ret: e.t, outcome: 'ok', value: e.value ?? null, rev: e.rev, cleared: e.cleared })
    else if (e.phase === 'fail') {
      Object.assign(o, { ret: e.t, outcome: 'fail', conflict: e.conflict, current: e.current ?? null })
      if (!e.isLeaseLost || e.reason !== 'superseded')
        violate('superseded-shape', `${e.chat}: refused write not a LeaseLostError 'superseded' (${e.name} ${e.reason})`, [e])
    }
  }
  // A fenced clear answers false, and a fenced write is refused, when the chat has a fence above the
  // op's own (a newer turn was granted, or an operator revoked the turn), whatever the revision: the
  // register may then hold the expected revision. That is possible only if a newer fence could have
  // been set in Redis before the op returned: a grant above the op's fence whose wait began before
  // the return; a wait that began before it, was still going when the op's own wait began and whose
  // grant was never recorded (killed, or given up after Redis granted it); an operator's revocation.
  const lastOfInc = new Map()
  for (const e of ev) lastOfInc.set(e.inc, e.t)
  const waitsByChat = groupBy(
    [...msgs.values()].filter((m) => m.recv !== undefined),
    (m) => m.chat,
  )
  const newerFencePossible = (o) => {
    if (o.fence === undefined || o.fence === null) return false
    const waits = waitsByChat.get(o.chat) ?? []
    const own = waits.find((m) => m.inc === o.inc && m.fence === o.fence)
    const ownFrom = own?.recv ?? -Infinity
    for (const m of waits) {
      if (m.recv >= o.ret) continue
      if (m.fence !== undefined) {
        if (m.fence > o.fence) return true
      } else if ((m.fail ?? lastOfInc.get(m.inc) ?? Infinity) >= ownFrom) return true
    }
    return revocations.some(
      (f) =>
        (f.revokes.chat ? f.revokes.chat === o.chat : f.revokes.inc && !f.revokes.lead) && f.start < o.ret && (f.end ?? f.start) >= ownFrom,
    )
  }
  for (const o of opsById.values()) o.newerFence = newerFencePossible(o)

  const evictingRun = faults.some((f) => f.kind === 'eviction')
  for (const [chat, all] of groupBy([...opsById.values()], (o) => o.chat)) {
    // split the history at each data-loss event: after one, the register starts from an unknown value
    const cuts = dataLoss.map((f) => [f.lossAt, f.restoredAt ?? f.end]).sort((a, b) => a[0] - b[0])
    let segStart = -Infinity
    const segments = []
    for (const [lo, hi] of cuts) {
      segments.push({ from: segStart, to: lo, init: segStart === -Infinity ? null : WILD })
      segStart = hi
    }
    segments.push({ from: segStart, to: Infinity, init: segStart === -Infinity ? null : WILD })
    for (const seg of segments) {
      // ops wholly inside the segment; an op straddling a loss is left out (its effect may be lost)
      const ops = all.filter((o) => o.call >= seg.from && (o.ret === Infinity ? o.call < seg.to : o.ret <= seg.to))
      if (seg.to !== Infinity) for (const o of ops) if (o.ret === Infinity) o.ret = Infinity
      const r = checkRegister(ops, { init: seg.init, lossy: evictingRun })
      if (r.ok === null) stats.linUnchecked++
      else stats.linChecked++
      if (r.ok === false) {
        violate(
          'linearizability',
          `${chat}: checkpoint history is not a compare-and-set register (no order gets past op ${r.stuckAt}, called at ${fmt(r.deepestAt, t0)})`,
          r.ops.map((o) => ({ ...o, call: fmt(o.call, t0), ret: o.ret === Infinity ? 'unknown' : fmt(o.ret, t0) })),
        )
      }
      // acknowledged writes in revision order never go back to an older owner's fence
      const writes = ops.filter((o) => o.kind === 'set' && o.outcome === 'ok').sort((a, b) => Number(a.rev) - Number(b.rev))
      for (let i = 1; i < writes.length; i++) {
        if (writes[i].fence < writes[i - 1].fence) {
          violate(
            'checkpoint-lost',
            `${chat}: revision ${writes[i].rev} written by fence ${writes[i].fence} over revision ${writes[i - 1].rev} of fence ${writes[i - 1].fence}`,
            [writes[i - 1], writes[i]],
          )
        }
      }
      // an acknowledged write must be what the next read (that starts after it and after any later
      // acknowledged write finished) sees, unless a clear or an unknown op intervened: the
      // linearizability check covers it; count explicit losses for the table as well
      if (!evictingRun) {
        const reads = ops.filter((o) => o.kind === 'read' && o.outcome === 'ok')
        for (const w of writes) {
          const after = ops.filter((o) => o !== w && o.call > w.ret && o.kind !== 'read')
          const firstRead = reads.filter((r) => r.call > w.ret).sort((a, b) => a.call - b.call)[0]
          if (!firstRead) continue
          const between = after.filter((o) => o.call < firstRead.ret)
          // Any write or clear that overlaps w (or comes before the read) may be ordered after w: on a
          // slow link an acknowledgement arrives after another replica already overwrote the value.
          const concurrent = ops.filter((o) => o !== w && o.kind !== 'read' && o.call < firstRead.ret && o.ret > w.call)
          if (between.length || concurrent.length) continue
          if (firstRead.value !== w.rev)
            violate(
              'checkpoint-lost',
              `${chat}: revision ${w.rev} acknowledged at ${fmt(w.ret, t0)}, next read at ${fmt(firstRead.call, t0)} saw ${firstRead.value}`,
              [w, firstRead],
            )
        }
      }
    }
  }

  // ---------------------------------------------------------------- warnings and keys left
  if (cfg.evicting) {
    const incs = new Set(ev.filter((e) => e.type === 'start').map((e) => e.inc))
    for (const inc of incs) {
      if (!ev.some((e) => e.inc === inc && e.type === 'warning' && e.code === 'eviction-policy')) {
        violate('warning-missing', `replica incarnation ${inc} started on an evicting Redis without an eviction-policy warning`, [])
      }
    }
  }
  for (const k of keysLeft ?? []) violate('keys-left', k, [])
  for (const k of neighbourChanged ?? []) violate('tenant-neighbour', k, [])
  stats.neighbourChecked = neighbourChanged ? 1 : 0

  return { violations, stats }
}

export function groupBy(list, f) {
  const m = new Map()
  for (const x of list) {
    const k = f(x)
    if (!m.has(k)) m.set(k, [])
    m.get(k).push(x)
  }
  return m
}
