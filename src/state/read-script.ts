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
 * How many of a walk's commands (SCAN, read-listing-0, read-snapshot-0) one connection has at its
 * server at once. Redis runs every command a client's read brings in before it serves the next
 * client, so a walk that sends its calls together makes every other client wait for all of them:
 * with a few calls of about a millisecond each at the server, another client's command waits at
 * most a few milliseconds, and the server still has the next call when it finishes one.
 */
export const WALK_IN_FLIGHT = 2

const gates = new WeakMap<object, { busy: number; waiting: Array<() => void> }>()

/** `f` (one command of a walk on `conn`) once fewer than WALK_IN_FLIGHT of them are at its server. */
export async function walkCommand<T>(conn: object, f: () => Promise<T>): Promise<T> {
  let gate = gates.get(conn)
  if (!gate) gates.set(conn, (gate = { busy: 0, waiting: [] }))
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
