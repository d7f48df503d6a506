import { CoordinationError } from './coordination-error.js'

/**
 * A turn or lead could not be had: `timeout` (waited `waitMs`), `unreachable` (Redis did not answer),
 * `aborted` (the caller's signal), `stopped` (the coordinator stopped), `dropped` (the ticket was removed
 * from the queue: an operator's `chat skip`, or the ticket expired while this process was frozen),
 * `stale-grant` (the grant arrived after this process had been frozen too long to use it),
 * `overloaded` (this replica already has `maxWaiting` messages waiting for a turn: the message is
 * refused at once instead of slowing every other one; retry it later or shed it), `redis-oom` (Redis
 * refused the write: its memory reached maxmemory — nothing was written; retry once memory is freed).
 */
export type UnavailableReason = 'timeout' | 'unreachable' | 'aborted' | 'stopped' | 'dropped' | 'stale-grant' | 'overloaded' | 'redis-oom'

export class CoordinationUnavailableError extends CoordinationError {
  readonly reason: UnavailableReason
  readonly key: string | undefined
  constructor(reason: UnavailableReason, message: string, options?: { key?: string; cause?: unknown }) {
    super('ERR_COORDINATION_UNAVAILABLE', message, { cause: options?.cause })
    this.reason = reason
    this.key = options?.key
  }
}
