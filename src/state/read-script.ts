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

/**
 * How many commands of the walks of the keyspace (SCAN, read-listing-0, read-snapshot-0) this process
 * has at its servers at once, on every master together. Redis runs every command a client's read
 * brings in before it serves the next client, so a walk that sends its calls together makes every
 * other client wait for all of them: with two calls of about half a millisecond at a server, another
 * client's command waits about a millisecond, and the server has the next call when it finishes one.
 * Counted over all masters, not per master: a Cluster's masters sharing a host's cores are not all
 * kept busy at once by one operator's command (measured on 2 cores with 3 masters: another client's
 * p99 3.5 ms against 6 ms with two per master, for a listing 10% longer).
 */
export const WALK_IN_FLIGHT = 2

const gate = { busy: 0, waiting: [] as Array<() => void> }

/** `f` (one command of a walk) once fewer than WALK_IN_FLIGHT of them are at the servers. */
export async function walkCommand<T>(f: () => Promise<T>): Promise<T> {
  if (gate.busy >= WALK_IN_FLIGHT) await new Promise<void>((resolve) => gate.waiting.push(resolve))
  else gate.busy++
  try {
    return await f()
  } finally {
    const next = gate.waiting.shift()
    if (next) next()
    else gate.busy--
  }
}

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
