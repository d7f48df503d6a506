/**
 * What the replica's Redis ACL user may not do, found at start. A permission the replica cannot work
 * without is a PermissionDeniedError naming the grant; one it can do without is a warning, said once:
 * - INFO (and CLUSTER SLOTS on a Cluster): a restart or failover of Redis is not detected;
 * - PUBLISH: a replica offered a turn or a lead is not woken, and finds it by polling.
 * docs/operations.md ("A replica user") lists the grants, and what each missing one does.
 */
import { withTimeout, type RedisClient } from '../connection.js'
import { PermissionDeniedError } from '../errors/permission-denied-error.js'
import { isAclRefusal } from '../errors/from-redis.js'
import type { KeyLayout } from '../keys.js'
import type { Warning } from './backend.js'

/** The commands the coordination scripts run inside Redis (a user that may not run one is refused inside the script). */
export const SCRIPT_COMMANDS =
  '+time +hget +hmget +hgetall +hset +hsetnx +hdel +hincrby +del +exists +pexpire +pttl +zadd +zpopmin +zrem +zremrangebyscore'

/** Why a command is needed, for the ones a replica meets first. */
const WHY: Record<string, string> = {
  evalsha: ', with which every coordination step runs as a script',
  eval: ', with which a script runs when Redis has not cached it yet',
  subscribe: ', with which a waiting replica is woken',
  time: ", with which the scripts read Redis's clock",
}

const GRANT: Record<string, string> = { evalsha: '+evalsha +eval' }

/**
 * The refusal behind an error of start(), named with its grant; the error itself when it is no ACL
 * refusal. A refusal inside a script does not name the command: TIME is asked directly to tell.
 */
export async function explainRefusal(err: unknown, redis: RedisClient, keys: KeyLayout, timeoutMs: number): Promise<unknown> {
  const msg = err instanceof Error ? err.message : ''
  if (!isAclRefusal(msg)) return err
  const cause = { cause: err }
  const command = /'([\w|]+)' command/i.exec(msg)?.[1]?.toLowerCase()
  if (command)
    return new PermissionDeniedError(`may not run ${command.toUpperCase()}${WHY[command] ?? ''}`, GRANT[command] ?? `+${command}`, cause)
  const channels = `${keys.wakeChannelPrefix}*`
  if (/channel/i.test(msg)) return new PermissionDeniedError(`may not SUBSCRIBE to ${channels}`, `&${channels}`, cause)
  if (/\bkeys?\b/i.test(msg)) return new PermissionDeniedError(`may not access the keys under ${keys.prefix}:`, `~${keys.prefix}:*`, cause)
  const time = await withTimeout(redis.call('TIME'), timeoutMs, 'TIME').then(
    () => null,
    (e: unknown) => e,
  )
  if (time instanceof Error && /NOPERM/.test(time.message)) return new PermissionDeniedError(`may not run TIME${WHY.time}`, '+time', cause)
  return new PermissionDeniedError('may not run a command the coordination scripts use', SCRIPT_COMMANDS, cause)
}

/** INFO refused (server identity unknown): what the replica does without it. */
export const FAILOVER_DETECTION_OFF: Warning = {
  code: 'failover-detection-off',
  message:
    'the Redis user may not run INFO (grant +info; on a Cluster also +cluster|slots): a restart or failover of Redis is not detected, so leases it lost are not dropped at once and a wait whose ticket it lost fails as dropped instead of queueing again',
}

/**
 * PUBLISH to the wake channels, tried once at start on a channel no replica listens to: a refusal is
 * a warning (the scripts then grant without waking: see lua/includes/turn.lua), null otherwise.
 */
export async function publishCheck(redis: RedisClient, keys: KeyLayout, timeoutMs: number): Promise<Warning | null> {
  try {
    await withTimeout(redis.publish(`${keys.wakeChannelPrefix}start-check`, ''), timeoutMs, 'PUBLISH')
    return null
  } catch (err) {
    const msg = err instanceof Error ? err.message : ''
    if (!/NOPERM/.test(msg)) return null // not a refusal: the scripts' own calls tell the rest
    const grant = /channel/i.test(msg) ? `&${keys.wakeChannelPrefix}*` : '+publish'
    return {
      code: 'publish-refused',
      message: `the Redis user may not PUBLISH to ${keys.wakeChannelPrefix}* (grant ${grant}): a replica offered a turn or a lead is not woken and finds it at its next poll (up to maxPollMs later, and a lead at the next renewal)`,
    }
  }
}
