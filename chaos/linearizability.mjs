// A Porcupine/Knossos-style linearizability check of one checkpoint key's history, as a
// compare-and-set register whose value is the checkpoint's revision (null: no checkpoint).
//
// Wing & Gong's search with Lowe's memoization (the algorithm Porcupine implements): walk the
// history's call/return entries in real-time order, try to linearize each pending call, backtrack on
// a return that was not linearized, and cache (set of linearized ops, model state) pairs already
// explored. Operations whose outcome is unknown (a timeout, a dropped connection) have no return:
// they may take effect at any point after their call, or never. The model is nondeterministic (an
// unknown write yields a revision we may only see later), so the search state is a set of register
// values, as in Porcupine's powerset models.
//
// op: { id, kind: 'read'|'set'|'clear', call, ret (Infinity when unknown), outcome: 'ok'|'fail'|'info',
//       value (read), expected (set/clear), rev (set ok), cleared (clear ok), conflict, current,
//       newerFence (a fenced op: the chat may have had a fence above the op's own before it returned,
//       so a refusal on the fence — a clear answering false, a write refused as 'fence' — is possible
//       whatever the revision) }
// Values are revision strings, null (absent), WILD (unknown start after data loss) or '?<id>' (written
// by an unknown write and never observed).

export const WILD = '*'
const NULL = '∅'
const enc = (v) => (v === null ? NULL : v)

/** Successor values of one concrete register value `s` under `op` (empty: op impossible here). */
function stepOne(s, op, orphans) {
  const wild = s === WILD
  switch (op.kind) {
    case 'read':
      if (op.outcome !== 'ok') return [s]
      return wild || s === enc(op.value) ? [enc(op.value)] : []
    case 'set': {
      const e = enc(op.expected)
      if (op.outcome === 'ok') return wild || s === e ? [op.rev] : []
      if (op.outcome === 'fail') {
        // refused on the fence before the revision was compared: only once a newer fence could exist
        if (op.conflict === 'fence') return op.newerFence ? [s] : []
        const cur = enc(op.current)
        if (cur === e) return [] // a revision conflict reports a current revision other than the expected one
        return wild || s === cur ? [cur] : []
      }
      // unknown outcome: not applied, or applied with a revision seen later (an orphan) or never seen
      if (!(wild || s === e)) return [s]
      return [s, ...orphans, `?${op.id}`]
    }
    case 'clear': {
      const e = enc(op.expected)
      if (op.outcome === 'ok') {
        if (op.cleared) return wild || s === e ? [NULL] : []
        // false: the revision was another one, or (a fenced clear) a newer fence refused it
        return s === e && !op.newerFence ? [] : [s]
      }
      return wild || s === e ? [s, NULL] : [s]
    }
  }
  return []
}

function step(states, op, orphans, lossy) {
  const out = new Set()
  for (const s of states) {
    for (const n of stepOne(s, op, orphans)) out.add(n)
    // an evicting Redis may drop the key before any operation
    if (lossy && s !== NULL) for (const n of stepOne(NULL, op, orphans)) out.add(n)
  }
  return out
}

/**
 * Check one key's history. `init` is the register's value at the start (null, or WILD after data loss).
 * Returns { ok: true } | { ok: false, ops: [...] (a minimal window around the failure) } | { ok: null } (budget).
 */
export function checkRegister(ops, { init = null, lossy = false, epsMs = 2, budget = 300_000 } = {}) {
  if (ops.length === 0) return { ok: true }
  // Revisions observed but produced by no acknowledged write can only come from an unknown one.
  const produced = new Set(ops.filter((o) => o.kind === 'set' && o.outcome === 'ok').map((o) => o.rev))
  const seen = new Set()
  for (const o of ops) {
    if (o.kind === 'read' && o.outcome === 'ok' && o.value !== null) seen.add(o.value)
    if (o.kind === 'set' && o.outcome === 'fail' && o.current) seen.add(o.current)
  }
  const orphans = [...seen].filter((v) => !produced.has(v))

  const entries = []
  ops.forEach((op, i) => {
    entries.push({ i, call: true, t: op.call })
    entries.push({ i, call: false, t: op.ret === Infinity ? Infinity : op.ret + epsMs })
  })
  entries.sort((a, b) => a.t - b.t || (a.call === b.call ? 0 : a.call ? -1 : 1))
  // doubly linked list with a head sentinel; each call knows its return
  const head = { next: null, prev: null }
  let prev = head
  const callOf = new Map()
  for (const e of entries) {
    e.prev = prev
    prev.next = e
    prev = e
    if (e.call) callOf.set(e.i, e)
    else callOf.get(e.i).match = e
  }
  prev.next = null
  const lift = (e) => {
    e.prev.next = e.next
    if (e.next) e.next.prev = e.prev
    const m = e.match
    m.prev.next = m.next
    if (m.next) m.next.prev = m.prev
  }
  const unlift = (e) => {
    const m = e.match
    m.prev.next = m
    if (m.next) m.next.prev = m
    e.prev.next = e
    if (e.next) e.next.prev = e
  }
  let state = new Set([init === null ? NULL : init])
  let bits = 0n
  const cache = new Map()
  const stack = []
  let entry = head.next
  let steps = 0
  let deepest = 0
  let deepestOp = null
  while (head.next) {
    if (++steps > budget) return { ok: null }
    if (entry.call) {
      const op = ops[entry.i]
      const next = step(state, op, orphans, lossy)
      if (next.size) {
        const nb = bits | (1n << BigInt(entry.i))
        const sk = [...next].sort().join('|')
        const bk = nb.toString(36)
        let seenStates = cache.get(bk)
        if (!seenStates) cache.set(bk, (seenStates = new Set()))
        if (!seenStates.has(sk)) {
          seenStates.add(sk)
          stack.push({ entry, state })
          state = next
          bits = nb
          lift(entry)
          if (stack.length > deepest) {
            deepest = stack.length
            deepestOp = op
          }
          entry = head.next
          continue
        }
      }
      entry = entry.next
    } else {
      if (stack.length === 0) {
        // No order linearizes the history. The search has backtracked to the first return, so report
        // where it got furthest: the failure is among the ops just after the deepest one placed.
        const at = deepestOp ?? ops[entry.i]
        return { ok: false, ops: windowAround(ops, at), stuckAt: at.id, deepestAt: at.call }
      }
      const top = stack.pop()
      state = top.state
      bits &= ~(1n << BigInt(top.entry.i))
      unlift(top.entry)
      entry = top.entry.next
    }
  }
  return { ok: true }
}

function windowAround(ops, op) {
  const sorted = [...ops].sort((a, b) => a.call - b.call)
  const at = sorted.indexOf(op)
  return sorted.slice(Math.max(0, at - 8), at + 3)
}
