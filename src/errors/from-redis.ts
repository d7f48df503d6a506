import { CoordinationUnavailableError } from './coordination-unavailable-error.js'
import { CorruptStateError } from './corrupt-state-error.js'
import { CoordinationError } from './coordination-error.js'
import { InvalidIdError } from './invalid-id-error.js'
import { NotMasterError } from './not-master-error.js'

/**
 * The errors the Lua scripts raise, `redis.error_reply('BMC_<CODE>: <message>')`, each to the error
 * class it means (every class carries a stable `code`). A script lists the ones it raises under
 * "Errors" in its comment block.
 */
const SCRIPT_ERRORS: Record<string, (message: string, cause: Error) => Error> = {
  BMC_INVALID_ID: (message, cause) => new InvalidIdError(message, { cause }),
}

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
 * Redis refused a write because its memory reached maxmemory (policy noeviction, or nothing left to
 * evict): `OOM command not allowed when used memory > 'maxmemory'`, as the reply to a command or
 * raised inside a script.
 */
export function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && /(^|\W)OOM command not allowed\b/.test(err.message)
}

/**
 * A reply that says the server is not a master: READONLY from a replica, or a command every Redis
 * master has (TIME, EVALSHA, SCAN…) unknown to a Sentinel, which speaks the protocol but keeps no data.
 */
export function notMaster(err: unknown): NotMasterError | null {
  if (err instanceof NotMasterError) return err
  if (!(err instanceof Error)) return null
  if (/^READONLY\b/.test(err.message)) return new NotMasterError('replica', undefined, { cause: err })
  if (
    /^ERR unknown command '(time|evalsha|eval|script|scan|get|set|hget|hgetall|hmget|xadd|xrevrange|publish|config|exists|type|ttl|pttl|zrange|object)'/i.test(
      err.message,
    )
  ) {
    return new NotMasterError('sentinel', undefined, { cause: err })
  }
  return null
}

/** What was thrown, as an Error (a rejection may carry anything). */
export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e))
}

/**
 * The one place that maps what Redis (or a script) raised into this library's errors: the scripts'
 * BMC_* errors, the wrong type at a key (WRONGTYPE), a connection that is down. The status codes
 * of script replies are not errors: src/scripts/registry.ts decodes them.
 */
export function errorFromRedis(err: unknown, redisKey: string | Buffer | undefined): Error {
  if (err instanceof CoordinationError) return err
  const e = asError(err)
  if (/WRONGTYPE/.test(e.message) && redisKey) return new CorruptStateError(redisKey, 'wrong Redis type', { cause: e })
  // next_fence (lua/includes/time.lua) refuses a fence that is not a decimal integer below 2^53.
  const fence = /^ERR botmesh corrupt fence at ([\s\S]*?)(?:\s*script: [\s\S]*)?$/.exec(e.message)
  if (fence) {
    const why = 'its fence is not a decimal integer below 2^53: no fence was granted and nothing was written'
    return new CorruptStateError(redisKey ?? fence[1]!, why, { cause: e })
  }
  const script = /\b(BMC_[A-Z_]+):?\s*(.*)$/.exec(e.message)
  const toClass = script && SCRIPT_ERRORS[script[1]!]
  if (toClass) return toClass(script[2]!.replace(/\s*script: .*$/, ''), e)
  const role = notMaster(e)
  if (role) return role
  if (isOutOfMemory(e)) {
    return new CoordinationUnavailableError('redis-oom', `Redis is out of memory (maxmemory reached, writes refused): ${e.message}`, {
      cause: e,
    })
  }
  if (isConnectionError(e)) return new CoordinationUnavailableError('unreachable', `Redis unreachable: ${e.message}`, { cause: e })
  return e
}

/**
 * Is this Redis error message an ACL refusal? Redis 7.0 words them `NOPERM this user has no
 * permissions to run the 'x' command`, or inside a script `The user executing the script can't run
 * this command`; 7.2 `No permissions to access a key` and `ACL failure in script: No permissions to
 * run the 'x' command`. The library (a replica's start) and the CLI (which grant to name) both ask here.
 */
export function isAclRefusal(msg: string): boolean {
  return /NOPERM|user executing the script can't|No permissions|ACL failure/i.test(msg)
}
