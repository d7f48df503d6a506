import { CoordinationUnavailableError } from './coordination-unavailable-error.js'
import { CorruptStateError } from './corrupt-state-error.js'
import { CoordinationError } from './coordination-error.js'

/** Errors of the transport (not of a command): the connection is down, closed, or timed out. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: string }).code
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNABORTED'].includes(code)) return true
  return /Connection is closed|connect ETIMEDOUT|Command timed out|MaxRetriesPerRequest|Stream isn.t writeable|enableOfflineQueue|CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|Too many Cluster redirections|^MOVED |^ASK |All nodes|Failed to refresh slots cache|None of startup nodes is available/i.test(
    err.message,
  )
}

/**
 * The one place that maps what Redis (or a script) answered into this library's errors.
 * Script results carry small negative status codes that each script documents; the wrong type at
 * a key is reported by Redis itself as WRONGTYPE.
 */
export function errorFromRedis(err: unknown, redisKey: string | undefined): Error {
  if (err instanceof CoordinationError) return err
  const e = err instanceof Error ? err : new Error(String(err))
  if (/WRONGTYPE/.test(e.message) && redisKey) return new CorruptStateError(redisKey, 'wrong Redis type', { cause: e })
  if (/BMC_CORRUPT/.test(e.message)) {
    return new CorruptStateError(redisKey ?? '?', e.message.replace(/^.*BMC_CORRUPT:?\s*/, ''), { cause: e })
  }
  if (isConnectionError(e)) return new CoordinationUnavailableError('unreachable', `Redis unreachable: ${e.message}`, { cause: e })
  return e
}
