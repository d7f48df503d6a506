// The checkers checked: synthetic histories with a planted violation must be caught, clean ones not.
// node chaos/selftest.mjs (also run by test/chaos-smoke.test.ts)
import assert from 'node:assert/strict'
import { checkRun } from './checkers.mjs'
import { checkRegister } from './linearizability.mjs'

const cfg = { leaseMs: 1000, turnWaitMs: 8000, maxPollMs: 100, handoffSlackMs: 400, sentMessages: 0 }
const turn = (inc, chat, fence, t0, t1, msg) => [
  { t: t0 - 1, w: inc, inc, type: 'recv', msg, chat },
  { t: t0, w: inc, inc, type: 'grant', msg, chat, fence },
  { t: t1, w: inc, inc, type: 'assert', chat, fence },
  { t: t1 + 1, w: inc, inc, type: 'done', msg, chat, fence },
  { t: t1 + 2, w: inc, inc, type: 'release', chat, fence },
]
const names = (r) => r.violations.map((v) => v.invariant).sort()
const run = (events, extra = {}) =>
  checkRun({
    events,
    sink: [],
    faults: [],
    cfg: { ...cfg, sentMessages: events.filter((e) => e.type === 'recv').length },
    keysLeft: [],
    t0: 0,
    ...extra,
  })

// clean: two turns one after the other, fences growing
assert.deepEqual(names(run([...turn('a', 'c', 10, 100, 200, 1), ...turn('b', 'c', 11, 300, 400, 2)])), [])
// overlap: b granted while a still passed assertHeld
assert.deepEqual(names(run([...turn('a', 'c', 10, 100, 350, 1), ...turn('b', 'c', 11, 300, 400, 2)])), ['turn-overlap'])
// one grant taken for two messages of the same replica (the second before the first released)
assert.deepEqual(names(run([...turn('a', 'c', 10, 100, 200, 1), ...turn('a', 'c', 10, 150, 250, 2)])), ['turn-overlap'])
// fence going back after a turn ended
assert.deepEqual(names(run([...turn('a', 'c', 11, 100, 200, 1), ...turn('b', 'c', 10, 300, 400, 2)])), ['fence-order'])
// a neighbouring tenant's key changed (a clean history otherwise); not checked (null) after data loss
assert.deepEqual(names(run(turn('a', 'c', 10, 100, 200, 1), { neighbourChanged: ['x:eu:c:chat:0: {} ttl -2'] })), ['tenant-neighbour'])
assert.deepEqual(names(run(turn('a', 'c', 10, 100, 200, 1), { neighbourChanged: [] })), [])
// FIFO: one replica, two messages granted in the wrong order
assert.deepEqual(
  names(
    run([
      { t: 10, w: 'a', inc: 'a', type: 'recv', msg: 1, chat: 'c' },
      { t: 11, w: 'a', inc: 'a', type: 'recv', msg: 2, chat: 'c' },
      { t: 20, w: 'a', inc: 'a', type: 'grant', msg: 2, chat: 'c', fence: 5 },
      { t: 21, w: 'a', inc: 'a', type: 'done', msg: 2, chat: 'c', fence: 5 },
      { t: 30, w: 'a', inc: 'a', type: 'grant', msg: 1, chat: 'c', fence: 6 },
      { t: 31, w: 'a', inc: 'a', type: 'done', msg: 1, chat: 'c', fence: 6 },
    ]),
  ),
  ['fifo'],
)
// queued-stall: y killed with a message queued behind x's long turn; z's waiting message is granted
// more than leaseMs + a poll after the kill (and after x's turn): caught; in time: clean
{
  const killed = [{ kind: 'kill-queued', target: 'y', inc: 'y', killedInc: 'y', killedAt: 200, start: 200, end: 200 }]
  const history = (zGrant) => [
    ...turn('x', 'c', 10, 100, 1150, 1),
    { t: 150, w: 'y', inc: 'y', type: 'recv', msg: 2, chat: 'c' },
    { t: 160, w: 'z', inc: 'z', type: 'recv', msg: 3, chat: 'c' },
    { t: zGrant, w: 'z', inc: 'z', type: 'grant', msg: 3, chat: 'c', fence: 12 },
    { t: zGrant + 5, w: 'z', inc: 'z', type: 'assert', chat: 'c', fence: 12 },
    { t: zGrant + 6, w: 'z', inc: 'z', type: 'done', msg: 3, chat: 'c', fence: 12 },
    { t: zGrant + 7, w: 'z', inc: 'z', type: 'release', chat: 'c', fence: 12 },
  ]
  assert.deepEqual(names(run(history(2200), { faults: killed })), ['queued-stall'])
  assert.deepEqual(names(run(history(1400), { faults: killed })), [])
}
// liveness: a healthy replica's message failed
assert.deepEqual(
  names(
    run([
      { t: 10, w: 'a', inc: 'a', type: 'recv', msg: 1, chat: 'c' },
      { t: 20, w: 'a', inc: 'a', type: 'fail', msg: 1, chat: 'c', stage: 'acquire', code: 'X' },
    ]),
  ),
  ['liveness'],
)
// the same failure during a fault of that replica is excused
assert.deepEqual(
  names(
    run(
      [
        { t: 10, w: 'a', inc: 'a', type: 'recv', msg: 1, chat: 'c' },
        { t: 20, w: 'a', inc: 'a', type: 'fail', msg: 1, chat: 'c' },
      ],
      { faults: [{ kind: 'net-cut', target: 'a', scope: 'replica', start: 0, end: 15 }] },
    ),
  ),
  [],
)
// an overlap after Redis lost its data is explained, if the old holder stopped in time
const loss = { kind: 'redis-restart-empty', scope: 'global', dataLoss: true, lossAt: 200, restoredAt: 300, start: 200, end: 300 }
assert.deepEqual(names(run([...turn('a', 'c', 10, 100, 320, 1), ...turn('b', 'c', 11, 310, 400, 2)], { faults: [loss] })), [])
assert.deepEqual(names(run([...turn('a', 'c', 10, 100, 2000, 1), ...turn('b', 'c', 11, 310, 400, 2)], { faults: [loss] })), ['fail-closed'])
// a wait given up while cut off: its ticket gone within leaseMs / 3 + poll (+ slack) of Redis answering again
const cutWaiting = (clearedAt) => ({
  kind: 'net-cut-waiting',
  target: 'a',
  inc: 'a',
  chat: 'c',
  tickets: [3],
  scope: 'replica',
  start: 100,
  restoredAt: 900,
  end: 2000,
  clearedAt,
})
const linkBack = { t: 1000, w: 'a', inc: 'a', type: 'link-ready' }
assert.deepEqual(names(run([linkBack], { faults: [cutWaiting(1700)] })), [])
assert.deepEqual(names(run([linkBack], { faults: [cutWaiting(2000)] })), ['withdraw-time'])
assert.deepEqual(names(run([linkBack], { faults: [cutWaiting(null)] })), ['withdraw-time'])
// …and its next message in that chat is not dropped as a dead replica's
assert.deepEqual(
  names(
    run(
      [
        linkBack,
        { t: 950, w: 'a', inc: 'a', type: 'recv', msg: 9, chat: 'c' },
        { t: 2600, w: 'a', inc: 'a', type: 'fail', msg: 9, chat: 'c', stage: 'acquire', reason: 'dropped' },
      ],
      { faults: [cutWaiting(1200)] },
    ),
  ),
  ['live-dropped'],
)
// sink: a lower fence accepted after a higher one
assert.deepEqual(
  names(
    run([], {
      sink: [
        { kind: 'chat', key: 'c', fence: 11, accepted: true },
        { kind: 'chat', key: 'c', fence: 10, accepted: true },
      ],
    }),
  ),
  ['sink-stale-accepted'],
)
// checkpoints: a lost acknowledged write
const cp = (id, inc, op, t0, t1, extra) => [
  { t: t0, inc, type: 'cp', op, chat: 'c', id, phase: 'call', ...extra.call },
  { t: t1, inc, type: 'cp', op, chat: 'c', id, phase: 'ok', ...extra.ok },
]
const lost = run([
  ...cp('1', 'a', 'set', 10, 20, { call: { expected: null, fence: 5 }, ok: { rev: '100' } }),
  ...cp('2', 'a', 'set', 30, 40, { call: { expected: '100', fence: 5 }, ok: { rev: '101' } }),
  ...cp('3', 'b', 'read', 50, 60, { call: {}, ok: { value: '100' } }),
])
assert.deepEqual(names(lost), ['checkpoint-lost', 'linearizability'])
// an older owner's write over a newer one's
assert.ok(
  names(
    run([
      ...cp('1', 'a', 'set', 10, 20, { call: { expected: null, fence: 7 }, ok: { rev: '100' } }),
      ...cp('2', 'b', 'set', 30, 40, { call: { expected: '100', fence: 5 }, ok: { rev: '101' } }),
    ]),
  ).includes('checkpoint-lost'),
)
// a refused write that is not a LeaseLostError 'superseded'
assert.deepEqual(
  names(
    run([
      { t: 1, w: 'b', inc: 'b', type: 'recv', msg: 7, chat: 'c' },
      { t: 2, w: 'b', inc: 'b', type: 'grant', msg: 7, chat: 'c', fence: 6 },
      { t: 3, w: 'b', inc: 'b', type: 'done', msg: 7, chat: 'c', fence: 6 },
      { t: 10, inc: 'a', type: 'cp', op: 'set', chat: 'c', id: '1', phase: 'call', expected: null, fence: 5 },
      { t: 20, inc: 'a', type: 'cp', op: 'set', chat: 'c', id: '1', phase: 'fail', conflict: 'fence', isLeaseLost: false, reason: null },
    ]),
  ),
  ['superseded-shape'],
)
// A fenced clear that answers false while the revision still matched: refused on the fence, which is
// only possible once a newer turn could have been granted (here: b's wait began before the clear
// returned and b got a higher fence) — the late clear of a holder whose lease expired on a slow link
const fencedRefusal = (extra) => [
  ...cp('1', 'a', 'set', 10, 20, { call: { expected: null, fence: 5 }, ok: { rev: '100' } }),
  ...cp('2', 'a', 'clear', 30, 900, { call: { expected: '100', fence: 5 }, ok: { cleared: false } }),
  ...extra,
  ...cp('3', 'b', 'read', 950, 960, { call: {}, ok: { value: '100' } }),
]
const newerTurn = (recvAt) => [
  { t: recvAt, w: 'b', inc: 'b', type: 'recv', msg: 7, chat: 'c' },
  { t: 940, w: 'b', inc: 'b', type: 'grant', msg: 7, chat: 'c', fence: 6 },
]
const ownTurn = [
  { t: 1, w: 'a', inc: 'a', type: 'recv', msg: 6, chat: 'c' },
  { t: 2, w: 'a', inc: 'a', type: 'grant', msg: 6, chat: 'c', fence: 5 },
]
const cpNames = (events) => names(run(events)).filter((n) => n === 'linearizability')
assert.deepEqual(cpNames(fencedRefusal([...ownTurn, ...newerTurn(500)])), [])
// …not when no newer fence could exist before it returned: then false with the revision matching is wrong
assert.deepEqual(cpNames(fencedRefusal([...ownTurn])), ['linearizability'])
assert.deepEqual(cpNames(fencedRefusal([...ownTurn, ...newerTurn(920)])), ['linearizability'])
// …nor for an unfenced clear
assert.deepEqual(
  cpNames([
    ...ownTurn,
    ...newerTurn(500),
    ...cp('1', 'a', 'set', 10, 20, { call: { expected: null, fence: 5 }, ok: { rev: '100' } }),
    ...cp('2', 'a', 'clear', 30, 900, { call: { expected: '100' }, ok: { cleared: false } }),
  ]),
  ['linearizability'],
)
// …a wait whose grant was never recorded (its replica killed) may hold the newer fence
assert.deepEqual(cpNames(fencedRefusal([...ownTurn, { t: 400, w: 'k', inc: 'k', type: 'recv', msg: 8, chat: 'c' }])), [])
// …and so may an operator's release of the chat
assert.deepEqual(
  names(
    run(fencedRefusal([...ownTurn]), {
      faults: [{ kind: 'op-release-chat', scope: 'operator', start: 300, end: 310, revokes: { chat: 'c', inc: 'a' } }],
    }),
  ).filter((n) => n === 'linearizability'),
  [],
)
// a write refused on the fence with no newer fence anywhere
const fenceRefusedWrite = (extra) => [
  ...cp('1', 'a', 'set', 10, 20, { call: { expected: null, fence: 5 }, ok: { rev: '100' } }),
  { t: 30, inc: 'a', type: 'cp', op: 'set', chat: 'c', id: '2', phase: 'call', expected: '100', fence: 5 },
  {
    t: 900,
    inc: 'a',
    type: 'cp',
    op: 'set',
    chat: 'c',
    id: '2',
    phase: 'fail',
    conflict: 'fence',
    isLeaseLost: true,
    reason: 'superseded',
  },
  ...extra,
]
assert.deepEqual(cpNames(fenceRefusedWrite([...ownTurn])), ['linearizability'])
assert.deepEqual(cpNames(fenceRefusedWrite([...ownTurn, ...newerTurn(500)])), [])
// the register: concurrent writes may linearize either way, a read must see the last
assert.equal(
  checkRegister([
    { id: 1, kind: 'set', call: 0, ret: 10, outcome: 'ok', expected: null, rev: 'a' },
    { id: 2, kind: 'set', call: 5, ret: 15, outcome: 'fail', conflict: 'revision', expected: null, current: 'a' },
    { id: 3, kind: 'read', call: 20, ret: 21, outcome: 'ok', value: 'a' },
  ]).ok,
  true,
)
assert.equal(
  checkRegister([
    { id: 1, kind: 'set', call: 0, ret: 10, outcome: 'ok', expected: null, rev: 'a' },
    { id: 2, kind: 'clear', call: 11, ret: 12, outcome: 'ok', expected: 'a', cleared: true },
    { id: 3, kind: 'read', call: 20, ret: 21, outcome: 'ok', value: 'a' },
  ]).ok,
  false,
)
// After a failover: a live replica's waiting message failing as 'dropped' (an operator's reason,
// no operator at work) is caught; the same replica frozen longer than its lease meanwhile (presumed
// dead, its tickets passed over) is not a failover's doing and is excused, as the liveness check does.
{
  const failover = {
    kind: 'sentinel-failover-lossy',
    target: 'redis',
    scope: 'global',
    failover: true,
    dataLoss: true,
    start: 1000,
    end: 3800,
    restoredAt: 3800,
  }
  const droppedMsg = [
    ...turn('b', 'c', 10, 100, 200, 1),
    { t: 3000, w: 'a', inc: 'a', type: 'recv', msg: 2, chat: 'c' },
    {
      t: 6000,
      w: 'a',
      inc: 'a',
      type: 'fail',
      msg: 2,
      chat: 'c',
      stage: 'acquire',
      code: 'ERR_COORDINATION_UNAVAILABLE',
      reason: 'dropped',
    },
    ...turn('b', 'c', 11, 4000, 4100, 3),
  ]
  assert.deepEqual(names(run(droppedMsg, { faults: [failover] })), ['failover-dropped'])
  const paused = { kind: 'pause-1.5', target: 'a', scope: 'replica', start: 4200, end: 5700 }
  assert.deepEqual(names(run(droppedMsg, { faults: [failover, paused] })), [])
}

console.log('chaos checkers: all planted violations caught')
