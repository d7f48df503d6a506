/**
 * A read-only script of the read side (read-listing-0, read-chat-2, read-snapshot-0) on one
 * connection: EVALSHA, and EVAL when Redis has not cached it yet. Redis refusing it (an ACL user
 * without EVALSHA, scripting off, a slot moving or failing over) is an answer, not a failure: the
 * caller reads the same keys with pipelined commands instead.
 */
import type { Redis } from 'ioredis'
import type { RedisClient } from '../connection.js'
import type { RedisKey } from '../keys.js'
import { loadScript } from '../scripts/load.js'

export type ScriptAnswer = { reply: unknown } | { refused: string }

/**
 * How many commands of the walks of the keyspace (SCAN, read-listing-0, read-snapshot-0) this process
 * has at the servers of one host at once. Redis runs every command a client's read brings in before it
 * serves the next client, so a walk that sends its calls together makes every other client wait for
 * all of them: with two calls of about half a millisecond at a server, another client's command waits
 * about a millisecond, and the server has the next call when it finishes one. Counted per host, not
 * per server: the masters of a Cluster that share a host's cores are not all kept busy at once by one
 * operator's command (measured on 2 cores with 3 masters, a listing of a million chats: another
 * client's p99 3.5 ms against 6 ms with two per master), and masters on other hosts are read side by side.
 */
export const WALK_IN_FLIGHT = 2

const gates = new Map<string, { busy: number; waiting: Array<() => void> }>()
/**
 * A walk command at its server longer than this no longer counts: a server that stopped answering
 * (frozen, cut off) must not hold its host's other servers' reads behind the commands it never
 * answers. Its connection's later commands go without waiting until it answers one.
 */
export const WALK_STALL_MS = 250
const stalled = new WeakSet<object>()

/** Where a connection's server is: the address it reached (through sentinels the options name none), else the one configured. */
export function serverAddress(conn: Redis): { host: string; port: number | undefined } {
  const stream = (conn as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream
  if (stream?.remoteAddress) return { host: stream.remoteAddress, port: stream.remotePort }
  return { host: conn.options.host ?? conn.options.path ?? '', port: conn.options.port }
}

/** `f` (one command of a walk on `conn`) once fewer than WALK_IN_FLIGHT of them are at its host's servers. */
export async function walkCommand<T>(conn: Redis, f: () => Promise<T>): Promise<T> {
  const answered = (p: Promise<T>): Promise<T> => p.finally(() => stalled.delete(conn))
  if (stalled.has(conn)) return answered(f())
  const host = serverAddress(conn).host
  let gate = gates.get(host)
  if (!gate) gates.set(host, (gate = { busy: 0, waiting: [] }))
  if (gate.busy >= WALK_IN_FLIGHT) await new Promise<void>((resolve) => gate.waiting.push(resolve))
  else gate.busy++
  let held = true
  const free = () => {
    if (!held) return
    held = false
    const next = gate.waiting.shift()
    if (next) next()
    else gate.busy--
  }
  // Stalled while this one waited: it does not take a place.
  if (stalled.has(conn)) {
    free()
    return answered(f())
  }
  const timer = setTimeout(() => {
    stalled.add(conn)
    free()
  }, WALK_STALL_MS)
  try {
    return await answered(f())
  } finally {
    clearTimeout(timer)
    free()
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
