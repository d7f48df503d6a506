/**
 * The lead scripts: acquire, release, the transport-down mark and the yield request
 * (lua/lead-acquire, lead-release, lead-transport, lead-yield). Split from registry.ts by family;
 * a lead's renewal is LEASE_RENEW in turn.ts, shared with chat turns.
 */
import { CorruptStateError } from '../../errors/corrupt-state-error.js'
import type { LeadReply, YieldResult } from '../../wire/types.js'
import { asIs, defineScript, unknownIf } from '../define.js'
import { holderOf, num, row, strOrNull, yes } from './replies.js'

export const LEAD_ACQUIRE = defineScript({
  name: 'lead-acquire-1',
  keys: ['lead'],
  argv: { replicaId: 'str', incarnation: 'str', leaseMs: 'int', idleTtlMs: 'int', stand: 'flag' },
  decode: (r, key): LeadReply => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return { status: 'granted', fence: num(a[1]), previousHolder: holderOf(a[2], a[3]) }
      case 2:
        return { status: 'mine', fence: num(a[1]), previousHolder: holderOf(a[2], a[3]) }
      case 0:
        return { status: 'held', holder: { replicaId: String(a[1]), incarnation: String(a[2]) }, fence: num(a[3]), msLeft: num(a[4]) }
      case -1:
        return { status: 'reserved', target: String(a[1]), msLeft: num(a[2]) }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // a second run after a grant answers 'mine' (this incarnation holds it): the callers take that up
  resent: asIs,
})

export const LEAD_RELEASE = defineScript({
  name: 'lead-release-1',
  keys: ['lead'],
  argv: { incarnation: 'str', fence: 'num?', leaseMs: 'int', idleTtlMs: 'int', wakeChannelPrefix: 'str' },
  decode: yes,
  // false from a second run: the first one released it, or it was not ours any more — not held either way
  resent: () => true,
})

export const LEAD_TRANSPORT = defineScript({
  name: 'lead-transport-1',
  keys: ['lead'],
  argv: { incarnation: 'str', fence: 'num', down: 'flag', yieldAfterMs: 'int' },
  decode: yes,
  // idempotent: a second run writes the same (down keeps the first `td`)
  resent: asIs,
})

export const LEAD_YIELD = defineScript({
  name: 'lead-yield-1',
  keys: ['lead'],
  argv: { by: 'str', target: 'str?', ttlMs: 'int', ifFence: 'num?', wakeChannelPrefix: 'str' },
  decode: (r, key): YieldResult => {
    const a = row(r, key)
    switch (a[0]) {
      case 1:
        return {
          status: 'requested',
          leader: { replicaId: String(a[1]), incarnation: String(a[2]) },
          fence: num(a[3]),
          wakeRefused: strOrNull(a[4]),
        }
      case 0:
        return { status: 'no-leader' }
      case -1:
        return { status: 'fence-changed', fence: num(a[1]) }
      case -2:
        return { status: 'target-not-standing' }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // a second run finds the request in place ('requested'); any other answer may follow the first run's
  // effect (the leader stepped down for it meanwhile)
  resent: unknownIf((r) => r.status !== 'requested'),
})
