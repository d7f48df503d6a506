/**
 * A read-only script of the read side (read-listing-0, read-chat-2, read-snapshot-0) on one
 * connection: EVALSHA, and EVAL when Redis has not cached it yet. Redis refusing it (an ACL user
 * without EVALSHA, scripting off, a slot moving or failing over) is an answer, not a failure: the
 * caller reads the same keys with pipelined commands instead.
 */
import type { RedisClient } from '../connection.js'
import type { RedisKey } from '../keys.js'
import { loadScript } from '../scripts/load.js'

export type ScriptAnswer = { reply: unknown } | { refused: string }

export async function runReadScript(
  conn: RedisClient,
  name: string,
  keys: RedisKey[],
  argv: Array<string | RedisKey>,
): Promise<ScriptAnswer> {
  const script = loadScript(name)
  try {
    try {
      return { reply: await conn.evalsha(script.sha, keys.length, ...keys, ...argv) }
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
      return { reply: await conn.eval(script.source, keys.length, ...keys, ...argv) }
    }
  } catch (err) {
    if ((err as Error)?.name !== 'ReplyError') throw err
    return { refused: (err as Error).message }
  }
}

/** Is a refusal for good (the user may never run scripts here), not of this one call? */
export const refusedForGood = (message: string): boolean => /NOPERM|unknown command|disabled/i.test(message)
