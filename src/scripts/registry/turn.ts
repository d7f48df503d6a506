/**
 * The chat-turn scripts and the lease renewals turns and leads share (lua/turn-acquire,
 * turn-release, lease-renew, lease-renew-many), with the turn status codes by name. Split from
 * registry.ts by family.
 */
import { CorruptStateError } from '../../errors/corrupt-state-error.js'
import type { HandedGrant, RenewReply, TurnReleaseReply, TurnReply } from '../../wire/types.js'
import { asIs, defineScript, type Reply } from '../define.js'
import { holderOf, num, numOrNull, row, unexpected, type Row } from './replies.js'

/**
 * The turn scripts' status codes by name: the same tables as TURN and RELEASE in
 * lua/includes/status.lua (test/integration/chat-schema.test.ts runs that file and compares).
 */
export const TURN_STATUS = { granted: 1, queued: 0, dropped: -1, lapsed: -2, stateLost: -3, presumedDead: -4 } as const
export const RELEASE_STATUS = { released: 1, withdrawn: 2, notOurs: 0 } as const

const releaseOutcome = (status: unknown): TurnReleaseReply['outcome'] =>
  status === RELEASE_STATUS.released ? 'released' : status === RELEASE_STATUS.withdrawn ? 'withdrawn' : 'not-ours'

/** A take's `alone` flag (1: no other ticket of this incarnation was queued in the chat); absent from polls. */
const alone = (v: unknown): { alone?: boolean } => (v === 1 ? { alone: true } : v === 0 ? { alone: false } : {})

export const TURN_ACQUIRE = defineScript({
  name: 'turn-acquire-2',
  keys: ['state', 'queue'],
  argv: {
    replicaId: 'str',
    incarnation: 'str',
    leaseMs: 'int',
    idleTtlMs: 'int',
    ticket: 'num?',
    wakeChannelPrefix: 'str',
    requestId: 'str',
    epoch: 'str?',
  },
  decode: (r, key): TurnReply => {
    const a = row(r, key)
    switch (a[0]) {
      case TURN_STATUS.granted:
        return { status: 'granted', ticket: num(a[1]), fence: num(a[2]), previousHolder: holderOf(a[3], a[4]), ...alone(a[5]) }
      case TURN_STATUS.queued: {
        const answeredAt = numOrNull(a[3])
        return {
          status: 'queued',
          ticket: num(a[1]),
          holderLeftMs: numOrNull(a[2]),
          ...(answeredAt === null ? {} : { answeredAt }),
          ...alone(a[4]),
          ...(typeof a[5] === 'string' && a[5] !== '' ? { epoch: a[5] } : {}),
        }
      }
      case TURN_STATUS.dropped:
        return { status: 'dropped' }
      case TURN_STATUS.lapsed:
        return { status: 'expired', ticket: num(a[1]) }
      case TURN_STATUS.stateLost:
        return { status: 'dropped', stateLost: true }
      case TURN_STATUS.presumedDead:
        return { status: 'dropped', presumedDead: true }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
    }
  },
  // the request id: a second run finds the ticket its first run took (and its grant)
  resent: asIs,
})

export const TURN_RELEASE = defineScript({
  name: 'turn-release-2',
  keys: ['state', 'queue'],
  argv: {
    incarnation: 'str',
    ticket: 'num?',
    leaseMs: 'int',
    idleTtlMs: 'int',
    wakeChannelPrefix: 'str',
    requestId: 'str',
    unserved: 'flag',
    lastWaiter: 'flag',
    queued: 'flag',
  },
  decode: (r, key): TurnReleaseReply => {
    if (!Array.isArray(r)) return { outcome: releaseOutcome(r), handed: null }
    const a = r as Row
    const ticket = num(a[1])
    const fence = num(a[2])
    if (!Number.isInteger(ticket) || !Number.isFinite(fence)) throw unexpected(key, r)
    const handed: HandedGrant = { ticket, fence, previousHolder: holderOf(a[4], a[5]), leaseMs: num(a[6]) }
    if (a[3]) handed.requestId = String(a[3])
    return { outcome: releaseOutcome(a[0]), handed }
  },
  // 'not-ours' from a second run: the first one released or withdrew — nothing of ours is left either
  // way, which is all the coordinator asks of it (it retries a release that failed, not one refused);
  // a turn the first run handed to a ticket of ours is reported by the second run as held by us
  resent: asIs,
})

/** Chat turns and leads alike: the key is the chat's state hash or the lead hash. */
export const LEASE_RENEW = defineScript({
  name: 'lease-renew-1',
  keys: ['lease'],
  argv: { incarnation: 'str', fence: 'num', leaseMs: 'int', idleTtlMs: 'int' },
  decode: (r, key): RenewReply => renewReply(row(r, key)),
  // a second run renews again (an answer other than ok is the state now: revoked or expired since)
  resent: asIs,
})

/** One reply of lease-renew-1 or of lease-renew-many-0 (one per key). */
function renewReply(a: Row): RenewReply {
  if (a[0] === 1) return { ok: true, yieldRequest: a[1] ? { by: String(a[1]), target: a[2] ? String(a[2]) : null } : null }
  return { ok: false, reason: a[1] === 'expired' ? 'expired' : 'revoked' }
}

/** Many leases of one incarnation renewed in one call (a standalone server): KEYS and fences variadic. */
export const LEASE_RENEW_MANY = defineScript({
  name: 'lease-renew-many-0',
  keys: [],
  argv: { incarnation: 'str', leaseMs: 'int', idleTtlMs: 'int' },
  decode: (r, key): RenewReply[] => row(r, key).map((x) => renewReply(row(x as Reply, key))),
  // a second run renews again (each answer other than ok is the state now)
  resent: asIs,
})
