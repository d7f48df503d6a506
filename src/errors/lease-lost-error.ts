import { CoordinationError } from './coordination-error.js'

/**
 * Why a lease (chat turn, lead, lock) is no longer ours:
 * - `expired`: not renewed in time (frozen process, Redis unreachable) — dropped locally before Redis expiry
 * - `revoked`: Redis says another holder or a higher fence owns the key (operator release, eviction, expiry seen by Redis)
 * - `superseded`: a fenced write (checkpoint) was refused because a newer owner exists
 * - `stopped`: the coordinator stopped or crashed
 * - `reset`: the Redis server lost the state (restart without persistence, failover)
 */
export type LeaseLostReason = 'expired' | 'revoked' | 'superseded' | 'stopped' | 'reset'

export class LeaseLostError extends CoordinationError {
  readonly reason: LeaseLostReason
  readonly key: string
  constructor(key: string, reason: LeaseLostReason, message?: string) {
    super('ERR_LEASE_LOST', message ?? `lease on ${JSON.stringify(key)} lost (${reason})`)
    this.key = key
    this.reason = reason
  }
}
