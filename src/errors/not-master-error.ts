import { CoordinationError } from './coordination-error.js'

/**
 * The server given where a Redis master is needed is not one: a `sentinel` (its address was given
 * as redis://; use redis+sentinel://<sentinels>/<master-name>), or a `replica` (read-only: point at
 * the master, or at the sentinels that follow it through failovers).
 */
export class NotMasterError extends CoordinationError {
  readonly role: 'sentinel' | 'replica'
  constructor(role: 'sentinel' | 'replica', message?: string, options?: { cause?: unknown }) {
    super(
      'ERR_NOT_MASTER',
      message ??
        (role === 'sentinel'
          ? 'the server is a Redis Sentinel, not a Redis master: give the sentinels as redis+sentinel://host:port[,host:port…]/<master-name>'
          : 'the server is a read-only replica, not the master: point at the master, or at its sentinels (redis+sentinel://…)'),
      options,
    )
    this.role = role
  }
}
