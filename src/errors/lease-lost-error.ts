import { CoordinationError } from './coordination-error.js'

/**
 * Why a lease (chat turn, lead, lock) is no longer ours — for good (the reasons of
 * `coordination:lease-lost`):
 * - `expired`: not renewed in time (frozen process, Redis unreachable) — dropped locally before Redis expiry
 * - `revoked`: Redis says another holder or a higher fence owns the key (operator release, eviction, expiry seen by Redis)
 * - `superseded`: a fenced write (checkpoint) was refused because a newer owner exists
 * - `stopped`: the coordinator stopped or crashed
 * - `reset`: the Redis server lost the state (restart without persistence, failover)
 */
export type LeaseLostReason = 'expired' | 'revoked' | 'superseded' | 'stopped' | 'reset'

/**
 * What a LeaseLostError says: one of the losses above, or
 * - `unconfirmed`: the holder's last confirmed renewal is late (it froze or could not reach Redis for
 *   half a lease): Redis may have given the lease away meanwhile, so it may not be used until a
 *   renewal confirms it again — the one reason that is not final (no `coordination:lease-lost`)
 * - `not-leader`: a ProviderNotLeaderError — this replica does not lead now (a standby, `onLeader`
 *   not resolved yet or rejected, or a lead that ended)
 */
export type LeaseErrorReason = LeaseLostReason | 'unconfirmed' | 'not-leader'

export class LeaseLostError extends CoordinationError {
  readonly reason: LeaseErrorReason
  readonly key: string
  /** `code`: a subclass's own stable code (ProviderNotLeaderError's `ERR_NOT_LEADER`). */
  constructor(key: string, reason: LeaseErrorReason, message?: string, code = 'ERR_LEASE_LOST') {
    super(code, message ?? `lease on ${JSON.stringify(key)} lost (${reason})`)
    this.key = key
    this.reason = reason
  }
}
